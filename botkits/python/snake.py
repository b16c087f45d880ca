"""The Snake protocol: read the state from stdin, write the move to stdout.

You should not need to edit this file: the strategy lives in snake_greedy.py
(or your own copy of it).

Every round the game writes one line of JSON (the state) to stdin and waits
for one line on stdout: the cell the head moves to, {"X":x,"Y":y}.
play() runs that loop, calling your turn function once per state.

A cell is (x, y) = (row, column), both from 0; row 0 is the top row.
"""

import json
import sys
import traceback

# Symbols of State.mat.
WALL = "#"
GROUND = "."
APPLE = "o"    # score +1
SHIELD = "O"   # score +1 and a shield for 20 rounds
SNAKE1 = "1"   # a cell of snake 1 (State.you == 1), head included
SNAKE2 = "2"
ITEMS = (APPLE, SHIELD)
SNAKES = (SNAKE1, SNAKE2)


def neighbours(p):
    """The four cells a head at p = (x, y) can move to: up (row - 1), down,
    left (column - 1), right."""
    x, y = p
    return [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]


def log(*args):
    """Print a debug line on stderr: the replay and the web viewer show it
    next to the round it belongs to (up to 4 KiB per round)."""
    print(*args, file=sys.stderr, flush=True)


class State:
    """One round's view of the game."""

    def __init__(self, raw):
        self.round = raw["round"]                    # from 1
        self.round_to_shrink = raw["round_to_shrink"]  # 1: the next round walls the next ring
        self.rows = raw["row_cnt"]
        self.cols = raw["col_cnt"]
        self.mat = raw["mat"]   # rows strings of cols symbols: mat[x][y]
        self.you = raw["you"]   # 1 or 2: your cells are "1" or "2" in mat
        self.head = (raw["your_posx"], raw["your_posy"])
        # Status: -1 dead, 0 normal, k > 0 shielded for the next k rounds.
        self.your_status = raw["your_status"]
        self.opponent_status = raw["opponent_status"]
        # Score: the length a snake grows to (its tail stays put while the
        # body is shorter).
        self.your_score = raw["your_score"]
        self.opponent_score = raw["opponent_score"]
        self.your_body = [tuple(c) for c in raw.get("your_body") or []]          # head first
        self.opponent_body = [tuple(c) for c in raw.get("opponent_body") or []]
        alive = self.opponent_status >= 0 and self.opponent_body
        # The opponent's head, or None once it is dead.
        self.opponent_head = (raw["opponent_posx"], raw["opponent_posy"]) if alive else None

    def inside(self, p):
        """Whether cell p is on the board."""
        return 0 <= p[0] < self.rows and 0 <= p[1] < self.cols

    def at(self, p):
        """The symbol of cell p; outside the board is a wall."""
        if not self.inside(p):
            return WALL
        row = self.mat[p[0]]
        return row[p[1]] if p[1] < len(row) else WALL

    def is_free(self, p):
        """Whether p is on the board and neither a wall nor a snake's cell."""
        return self.at(p) not in (WALL, SNAKE1, SNAKE2)

    def shrink_period(self):
        """P = ceil(4 * rows * cols / min(rows, cols)): every P rounds the
        next ring (ring 0 is the outermost one) becomes wall."""
        n, d = 4 * self.rows * self.cols, min(self.rows, self.cols)
        return (n + d - 1) // d

    def rings_closed(self):
        """How many rings are wall by now: rings 0 .. rings_closed() - 1."""
        return min(self.round // self.shrink_period(), (min(self.rows, self.cols) + 1) // 2)

    def ring(self, p):
        """The ring cell p lies on: 0 for the outermost rows and columns."""
        return min(p[0], p[1], self.rows - 1 - p[0], self.cols - 1 - p[1])


def _fallback(state):
    """A move when the strategy failed: a free neighbour if there is one."""
    for n in neighbours(state.head):
        if state.is_free(n):
            return n
    return neighbours(state.head)[0]


def play(turn):
    """Run the bot: for every state line on stdin, call turn(state) and
    write the cell it returns, (x, y), as {"X":x,"Y":y} on stdout. Returns
    when stdin ends."""
    for line in sys.stdin:
        if not line.strip():
            continue
        state = State(json.loads(line))
        try:
            x, y = turn(state)
            x, y = int(x), int(y)
        except Exception:
            # A bug in the strategy costs one move, not the whole match.
            traceback.print_exc(file=sys.stderr)
            x, y = _fallback(state)
        sys.stdout.write('{"X":%d,"Y":%d}\n' % (x, y))
        # Flush every round: an answer stuck in a buffer never reaches the
        # game, and the snake dies of a timeout.
        sys.stdout.flush()
