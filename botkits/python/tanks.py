"""The Tanks protocol: read the state from stdin, write actions to stdout.

You should not need to edit this file: the strategy lives in bot.py.

Every turn the game writes one line of JSON (the state) to stdin and waits
for one line on stdout: a JSON array of actions, e.g. [{"Type":1,"Direction":3}].
play() runs that loop, calling your turn function once per state.
"""

import json
import os
import sys
import traceback

# Object types (the "Type" of a cell).
TANK = 0
BARRIER = 1          # bullets damage it; tanks cannot enter
NOT_DESTROYABLE = 2  # stops bullets; tanks cannot enter
WATER = 3            # bullets fly over it; tanks cannot enter

# Directions. (0,0) is the bottom-left cell and Y grows upward.
UP = 0
DOWN = 1
LEFT = 2
RIGHT = 3
DIRECTIONS = (UP, DOWN, LEFT, RIGHT)
DIRECTION_NAMES = ("up", "down", "left", "right")

# Action types.
MOVE = 0
SHOOT = 1


def step(p, d):
    """The neighbour of cell p = (x, y) in direction d."""
    x, y = p
    if d == UP:
        return (x, y + 1)
    if d == DOWN:
        return (x, y - 1)
    if d == LEFT:
        return (x - 1, y)
    return (x + 1, y)


def move(d):
    """The action 'move one cell in direction d'."""
    return {"Type": MOVE, "Direction": d}


def shoot(d):
    """The action 'shoot in direction d' (ignored while your bullet flies)."""
    return {"Type": SHOOT, "Direction": d}


def log(*args):
    """Print a debug line on stderr: the replay and the web viewer show it
    next to the turn it belongs to (up to 4 KiB per turn)."""
    print(*args, file=sys.stderr, flush=True)


class Content:
    """One non-empty cell: a tank, barrier, indestructible block or water."""

    def __init__(self, raw):
        c = raw["Coordinates"]
        self.pos = (c["X"], c["Y"])
        self.type = raw["Type"]
        self.health = raw["HealthCount"]
        self.user_id = raw.get("UserId")  # tanks only

    def __repr__(self):
        return "Content(pos=%r, type=%r, health=%r, user_id=%r)" % (
            self.pos, self.type, self.health, self.user_id)


class Bullet:
    """A bullet in flight; it moves 2 cells per turn in its direction."""

    def __init__(self, raw):
        c = raw["Coordinates"]
        self.pos = (c["X"], c["Y"])
        self.direction = raw["Direction"]
        self.owner_id = raw["OwnerId"]

    def __repr__(self):
        return "Bullet(pos=%r, direction=%r, owner_id=%r)" % (
            self.pos, self.direction, self.owner_id)


class State:
    """One turn's view of the game."""

    def __init__(self, raw, my_id):
        self.my_id = my_id
        self.contents = [Content(c) for c in raw["ContentsInfo"]]
        self.bullets = [Bullet(b) for b in raw["BulletsInfo"]]
        self.zone_radius = raw["ZoneRadius"]
        # Board size, the outer ring of indestructible blocks included.
        self.width = max(c.pos[0] for c in self.contents) + 1
        self.height = max(c.pos[1] for c in self.contents) + 1
        self.cells = {c.pos: c for c in self.contents}
        tanks = [c for c in self.contents if c.type == TANK]
        self.me = next((t for t in tanks if t.user_id == my_id), None)
        self.enemies = [t for t in tanks if t.user_id != my_id]

    def at(self, p):
        """The Content at cell p, or None when the cell is empty."""
        return self.cells.get(p)

    def on_board(self, p):
        return 0 <= p[0] < self.width and 0 <= p[1] < self.height

    def is_free(self, p):
        """Whether a tank may move into cell p (bullets do not block it)."""
        return self.on_board(p) and p not in self.cells

    def in_zone(self, p, radius=None):
        """Whether cell p is inside the zone of the given radius (default:
        the current one). A tank outside loses 1 health per turn, and the
        radius shrinks by 1 every turn."""
        r = self.zone_radius if radius is None else radius

        def inside(c, s):
            return s // 2 - r + s % 2 <= c <= s // 2 + r - 1

        return inside(p[0], self.width) and inside(p[1], self.height)


def play(turn):
    """Run the bot: for every state line on stdin, call turn(state) and
    write its answer (one action, a list of actions, or None for nothing)
    as one line on stdout. Returns when stdin ends."""
    my_id = os.environ.get("ARENA_BOT_ID", "")  # our tank's UserId
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            state = State(json.loads(line), my_id)
            actions = turn(state)
        except Exception:
            # A bug in the strategy costs one turn, not the whole match.
            traceback.print_exc(file=sys.stderr)
            actions = None
        if actions is None:
            actions = []
        elif isinstance(actions, dict):
            actions = [actions]
        sys.stdout.write(json.dumps(actions, separators=(",", ":")) + "\n")
        # Flush every turn: an answer stuck in a buffer never reaches the
        # game, and the bot is disabled for a timeout.
        sys.stdout.flush()
