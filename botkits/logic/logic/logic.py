"""Tic-tac-toe as a Saiblo logic: the game's rules as a program of its own.

Arena (the judger) starts this program in its sandbox and talks to it on
stdin/stdout; see ../README.md for the protocol. Two bots play a series
of config["games"] games (default 1), seat 0 moving first in the first,
the first move alternating; a bot's score is its wins. A bot that faults
(times out, crashes, writes too much, plays an illegal move) loses the
series: 1 to 0. The logic writes its own replay to the path the init
message names.
"""
import json
import struct
import sys

IN, OUT = sys.stdin.buffer, sys.stdout.buffer


def read():
    """One message of the judger: a 4-byte big-endian length, then JSON."""
    head = IN.read(4)
    if len(head) < 4:
        sys.exit(0)  # the judger is gone
    (n,) = struct.unpack(">I", head)
    return json.loads(IN.read(n))


def send(target, message):
    """One message to the judger (target -1) or to a bot (its seat)."""
    data = message if isinstance(message, bytes) else json.dumps(message).encode()
    OUT.write(struct.pack(">Ii", len(data), target) + data)
    OUT.flush()


LINES = [[(r, c) for c in range(3)] for r in range(3)] + \
        [[(r, c) for r in range(3)] for c in range(3)] + \
        [[(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]]


def winner(board):
    for line in LINES:
        marks = {board[r][c] for r, c in line}
        if len(marks) == 1 and -1 not in marks:
            return marks.pop()
    return None


def main():
    init = read()
    config = init.get("config") or {}
    replay_path = init.get("replay", "/tmp/replay.json")
    games = int(config.get("games", 1))  # a series: the first move alternates
    # The bots' limits from now on: seconds per answer, bytes per answer.
    send(-1, {"state": 0, "time": config.get("time", 1), "length": 64})

    status = ["OK", "OK"]
    scores = [0, 0]
    errors = {0: "RE", 1: "TLE", 2: "OLE"}
    replay = []
    state = 1
    for game in range(games):
        board = [[-1] * 3 for _ in range(3)]
        won = None
        moves = []
        replay.append(moves)
        player = game % 2
        while True:
            # Ask the player to move: the board, and which mark is theirs.
            ask = json.dumps({"board": board, "you": player}) + "\n"
            send(-1, {"state": state, "listen": [player], "player": [player], "content": [ask]})
            state += 1
            answer = read()
            if answer["player"] == -1:  # the judger reports the bot's error
                error = json.loads(answer["content"])
                status[error["player"]] = errors.get(error["error"], "RE")
                break
            try:
                r, c = (int(x) for x in answer["content"].split())
                if not (0 <= r < 3 and 0 <= c < 3) or board[r][c] != -1:
                    raise ValueError
            except ValueError:
                status[player] = "IA"  # an illegal move loses
                break
            board[r][c] = player
            moves.append([player, r, c])
            won = winner(board)
            if won is not None:
                scores[won] += 1
                break
            if all(cell != -1 for row in board for cell in row):
                break  # a draw
            player = 1 - player
        fault = None
        if status != ["OK", "OK"]:
            # A fault ends the series: the other bot wins it.
            faulty = status.index(next(s for s in status if s != "OK"))
            scores = [0, 0]
            scores[1 - faulty] = 1
            won, fault = 1 - faulty, status[faulty]
        # For spectators: the game's final position, who won it and, if a
        # fault ended it, which (the next round's frame, or the last one,
        # keeps it).
        send(-1, {"watch": json.dumps({"board": board, "game": game, "winner": won, "fault": fault})})
        if fault:
            break

    with open(replay_path, "w") as f:
        json.dump({"games": replay, "scores": scores}, f)
    send(-1, {"state": -1, "end_info": json.dumps({"0": scores[0], "1": scores[1]}),
              "end_state": json.dumps(status)})


if __name__ == "__main__":
    main()
