"""A tic-tac-toe bot for the kit's logic.

Each turn it reads one line, {"board": [[-1|0|1]*3]*3, "you": 0|1}, and
answers "ROW COL" as a Saiblo AI does: a 4-byte big-endian length, then
the bytes. It wins when it can, blocks when it must, else takes the
centre, a corner, a side.
"""
import json
import struct
import sys

LINES = [[(r, c) for c in range(3)] for r in range(3)] + \
        [[(r, c) for r in range(3)] for c in range(3)] + \
        [[(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]]


def completing(board, mark):
    for line in LINES:
        cells = [board[r][c] for r, c in line]
        if cells.count(mark) == 2 and cells.count(-1) == 1:
            return line[cells.index(-1)]
    return None


def choose(board, me):
    for mark in (me, 1 - me):
        move = completing(board, mark)
        if move:
            return move
    for r, c in [(1, 1), (0, 0), (0, 2), (2, 0), (2, 2), (0, 1), (1, 0), (1, 2), (2, 1)]:
        if board[r][c] == -1:
            return r, c


def main():
    for line in sys.stdin:
        state = json.loads(line)
        r, c = choose(state["board"], state["you"])
        data = f"{r} {c}".encode()
        sys.stdout.buffer.write(struct.pack(">I", len(data)) + data)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
