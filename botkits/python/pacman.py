"""The Pac-Man-vs-ghosts protocol (the Saiblo judger's): read the seat, read
the init line, then loop over the rounds.

You should not need to edit this file: the strategies live in
pacman_runner.py (the Pac-Man) and pacman_ghosts.py (the three ghosts).

One bot plays the Pac-Man (role 0), the other the three ghosts (role 1); the
role is claimed by the bot's first message, whatever its seat. The platform
writes plain lines to stdin:
  - the seat, "0" or "1";
  - at each level start the init line (JSON: the board, positions, scores);
  - "player 0 send info" / "player 1 send info" when the other seat answered;
  - after each round the actions line {"pacman_action": 3, "ghosts_action": [0, 2, 4]}.
It sends no state during a level: Game.play_round() replays the rules on each
actions line, so the Game you get is up to date (positions, the board without
the eaten beans, skills, scores, portal).

The bot answers with a 4-byte big-endian length, then the UTF-8 JSON message:
{"role":0,"action":"3"} for the Pac-Man, {"role":1,"action":"1 0 4"} for the
ghosts. Seat 0 answers after the init line and after each actions line (after
the next level's init line when that round ended a level); seat 1 after each
"player 0 send info". play_pacman() / play_ghosts() do all of this.
"""

import json
import os
import select
import struct
import sys
import time
import traceback

# Roles.
PACMAN = 0
GHOSTS = 1

# Cell values of Game.board.
WALL = 0
EMPTY = 1
BEAN = 2       # 1 point
BONUS = 3      # a bonus bean: 2 points
SPEED = 4      # skill items, picked up by walking over them
MAGNET = 5
SHIELD_UP = 6
DOUBLE = 7
FREEZE = 8
PORTAL = 9

# Actions. "Up" is x + 1: rows grow upwards.
STAY = 0
UP = 1     # x + 1
LEFT = 2   # y - 1
DOWN = 3   # x - 1
RIGHT = 4  # y + 1
MOVES = (UP, LEFT, DOWN, RIGHT)
_DELTA = ((0, 0), (1, 0), (0, -1), (-1, 0), (0, 1))

# Indices of Game.skills (pacman_skill_status).
SKILL_DOUBLE = 0  # beans score double
SKILL_SPEED = 1   # the Pac-Man moves twice per round
SKILL_MAGNET = 2  # it eats the 3x3 square around it
SKILL_SHIELD = 3  # a count: each absorbs one catch
SKILL_FREEZE = 4  # the ghosts stand still

# Per level: the rounds it lasts and the round after which the portal opens
# (0: no portal).
LEVELS = ((500, 60), (400, 50), (300, 0))


def step(p, a):
    """Where action a leads from cell p = (x, y), walls not considered."""
    d = _DELTA[a] if 0 <= a <= 4 else _DELTA[STAY]
    return (p[0] + d[0], p[1] + d[1])


def log(*args):
    """Print a debug line on stderr: the replay and the web viewer show it
    next to the round it belongs to (up to 4 KiB per round)."""
    print(*args, file=sys.stderr, flush=True)


def legal(a):
    """a if it is an action 0..4, else STAY: anything else would be an
    illegal action, which loses the match."""
    return a if isinstance(a, int) and not isinstance(a, bool) and 0 <= a <= 4 else STAY


class Game:
    """What the bot knows: the level's init line, updated round by round
    from the actions."""

    def __init__(self, role):
        self.seat = -1
        self.role = role
        self.level = 0         # 1..3
        self.round = 0         # rounds played in this level
        self.max_rounds = 0    # the level ends (ghosts +75) after this many rounds
        self.size = 0
        self.board = []        # board[x][y]; eaten beans and items become EMPTY
        self.pacman = (0, 0)
        self.ghosts = [(0, 0)] * 3
        # Skills in effect in the next round, indexed by SKILL_*: rounds
        # left, or the shield count.
        self.skills = [0] * 5
        self.invulnerable = 0  # > 0: the Pac-Man cannot be caught next round
        self.score = [0, 0]    # Pac-Man, ghosts
        self.beans_left = 0
        self.portal = (-1, -1)  # (-1, -1) on level 3
        self.portal_open = False  # stepping on it ends the level, with a bonus
        self.level_over = False   # the last round ended the level
        self.game_over = False    # and it was the last level
        self._portal_at = 0
        self._survival = 0
        self._catches = 0

    def inside(self, p):
        return 0 <= p[0] < self.size and 0 <= p[1] < self.size

    def at(self, p):
        """The value of cell p; outside the board is a wall."""
        return self.board[p[0]][p[1]] if self.inside(p) else WALL

    def move(self, p, a):
        """Where action a really takes a piece from p: into a wall it stays."""
        q = step(p, a)
        return q if self.at(q) != WALL else p

    def start_level(self, init):
        """Take a level's init line (already decoded)."""
        self.level = init["level"]
        self.round = init["round"]
        self.size = init["board_size"]
        self.board = [list(row) for row in init["board"]]
        self.skills = list(init["pacman_skill_status"])
        self.pacman = tuple(init["pacman_coord"])
        self.ghosts = [tuple(c) for c in init["ghosts_coord"]]
        self.score = list(init["score"])
        self.beans_left = init["beannumber"]
        self.portal_open = init["portal_available"]
        self.portal = tuple(init["portal_coord"])
        if 1 <= self.level <= len(LEVELS):
            self.max_rounds, self._portal_at = LEVELS[self.level - 1]
        self._survival = self._catches = 0
        self.level_over = self.game_over = False
        log("level %d: %dx%d, %d beans" % (self.level, self.size, self.size, self.beans_left))

    def play_round(self, pac, ghosts):
        """Replay one round of the rules (as Arena's
        engine/pacman plays it) on the submitted actions."""
        pac = legal(pac)
        ghosts = [legal(a) for a in ghosts]
        self.round += 1
        start = list(self.skills)  # in effect during this round
        for k in (SKILL_DOUBLE, SKILL_MAGNET, SKILL_SPEED):
            if self.skills[k] > 0:
                self.skills[k] -= 1
        if start[SKILL_FREEZE] > 0:
            ghosts = [STAY] * 3
            self.skills[SKILL_FREEZE] -= 1

        # Moves. The catch test compares positions in half cells: the start,
        # the middle of a single step (or the first of two), the end.
        path = [self.pacman]
        for _ in range(2 if start[SKILL_SPEED] > 0 else 1):
            self._eat(start)
            self.pacman = self.move(self.pacman, pac)
            path.append(self.pacman)
        pac_half = _halves(path)
        ghost_half = []
        for j in range(3):
            frm = self.ghosts[j]
            self.ghosts[j] = self.move(frm, ghosts[j])
            ghost_half.append(_halves([frm, self.ghosts[j]]))
        self._eat(start)

        # Catch: a ghost within half a cell of the Pac-Man at the middle or
        # the end of the round.
        caught = any(abs(g[k][0] - pac_half[k][0]) + abs(g[k][1] - pac_half[k][1]) <= 1
                     for k in (1, 2) for g in ghost_half)
        eaten = False
        if caught and self.invulnerable == 0 and start[SKILL_SHIELD] > 0:
            self.skills[SKILL_SHIELD] -= 1
            self.invulnerable = 1
            self.score[1] += 10
            self._survival = 0
        elif caught and self.invulnerable == 0:
            eaten = True
            self.invulnerable = 3
            self.score[0] -= 60
            self.score[1] += 50
            self._catches += 1
            self._survival = 0
            self.skills = [0] * 5
            self.pacman = self._respawn()
        else:
            if self.invulnerable > 0:
                self.invulnerable -= 1
            self._survival += 1
            if self._survival >= 100:
                self.score[0] += 50
                self._survival = 0
        if self._catches >= 5:
            self.score[1] += 60
            self._catches = 0

        # The level ends through the open portal, with every bean eaten, or
        # when time is up.
        if self.portal_open and not eaten and self.portal in path:
            self._finish()
            return
        if self._portal_at > 0 and self.round >= self._portal_at:
            self.portal_open = True
        if self.beans_left <= 0:
            self._finish()
            return
        if self.round >= self.max_rounds:
            self.score[1] += 75
            self._end_level()

    def _eat(self, active):
        """Take what lies under the Pac-Man (the 3x3 square with the magnet)."""
        r = 1 if active[SKILL_MAGNET] > 0 else 0
        points = 2 if active[SKILL_DOUBLE] > 0 else 1
        px, py = self.pacman
        for x in range(px - r, px + r + 1):
            for y in range(py - r, py + r + 1):
                if not (1 <= x <= self.size - 2 and 1 <= y <= self.size - 2):
                    continue
                v = self.board[x][y]
                if v == BEAN:
                    self.score[0] += points
                    self.beans_left -= 1
                elif v == BONUS:
                    self.score[0] += 2 * points
                    self.beans_left -= 1
                elif v == SPEED:
                    self.skills[SKILL_SPEED] = 8
                elif v == MAGNET:
                    self.skills[SKILL_MAGNET] = 8
                elif v == DOUBLE:
                    self.skills[SKILL_DOUBLE] = 8
                elif v == FREEZE:
                    self.skills[SKILL_FREEZE] = 2
                elif v == SHIELD_UP:
                    self.skills[SKILL_SHIELD] += 1
                else:
                    continue
                self.board[x][y] = EMPTY

    def _finish(self):
        # A level left through the portal or emptied of beans.
        if self.beans_left <= 0:
            self.score[0] += 50
        self.score[0] += int((self.max_rounds - self.round) * 0.43)
        self._end_level()

    def _end_level(self):
        self.skills = [0] * 5
        self._survival = self._catches = 0
        self.level_over = True
        self.game_over = self.level >= len(LEVELS)

    def _respawn(self):
        # Where an eaten Pac-Man reappears: the EMPTY cell farthest from its
        # nearest ghost, the first in row order among equals.
        best, best_dist = self.pacman, 0
        for x in range(self.size):
            row = self.board[x]
            for y in range(self.size):
                if row[y] != EMPTY:
                    continue
                d = min(abs(gx - x) + abs(gy - y) for gx, gy in self.ghosts)
                if d > best_dist:
                    best, best_dist = (x, y), d
        return best


def _halves(path):
    # A path of 2 or 3 cells as 3 samples in half cells: a single step gets
    # its middle.
    if len(path) == 3:
        return [(2 * x, 2 * y) for x, y in path]
    (ax, ay), (bx, by) = path
    return [(2 * ax, 2 * ay), (ax + bx, ay + by), (2 * bx, 2 * by)]


class _Input:
    """Lines from stdin, read straight from the file descriptor so that the
    bot can wait for a line with a time limit (select)."""

    def __init__(self, fd=0):
        self.fd = fd
        self.buf = b""
        self.eof = False

    def _fill(self, timeout):
        # Read what is available; False when nothing came within timeout.
        if timeout is not None:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
            if not ready:
                return False
        data = os.read(self.fd, 1 << 16)
        if not data:
            self.eof = True
        self.buf += data
        return True

    def ready(self, timeout=0.0):
        """Whether a line (or the end of the input) is there within timeout
        seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf and not self.eof:
            if not self._fill(deadline - time.monotonic()):
                return False
        return True

    def line(self):
        """The next line without its newline, or None at the end of the
        input."""
        while b"\n" not in self.buf and not self.eof:
            self._fill(None)
        if b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
        elif self.buf:
            line, self.buf = self.buf, b""
        else:
            return None
        return line.decode("utf-8", "replace").strip()


def send(role, action):
    """Write one framed message: a 4-byte big-endian length, then the JSON
    {"role":role,"action":action}, and flush it."""
    data = json.dumps({"role": role, "action": action}, separators=(",", ":")).encode("utf-8")
    out = sys.stdout.buffer
    msg = struct.pack(">I", len(data)) + data
    while msg:
        n = out.write(msg)
        msg = msg[n if n is not None else len(msg):]
    # Flush every answer: one left in a buffer never reaches the game.
    out.flush()


# How long seat 0 waits for the next level's init line after a round that
# its tracking says ended the level (the answer time is 1 s).
LEVEL_WAIT = 0.4


def _play(role, action):
    """The judger loop. action(game) gives the message's action string."""
    inp = _Input()
    game = Game(role)

    def answer():
        try:
            a = action(game)
        except Exception:
            # A bug in the strategy costs one round, not the match: stand
            # still (an illegal action string would lose the match).
            traceback.print_exc(file=sys.stderr)
            a = "0" if role == PACMAN else "0 0 0"
        try:
            send(role, a)
        except BrokenPipeError:
            sys.exit(0)  # the match is over

    # 1. The seat: "0" or "1".
    seat = inp.line()
    if seat not in ("0", "1"):
        log("pacman: expected the seat, got %.60r" % seat)
        return
    game.seat = int(seat)
    # 2. The first level's init line.
    first = inp.line()
    if first is None:
        return
    game.start_level(json.loads(first))
    # Seat 0 opens every round: it owes an answer now, and after each
    # actions line. It answers once nothing more is waiting on stdin, or,
    # after a round that ended a level, once the next init line is read
    # (it follows the actions line at once; none comes after the last level).
    owe = game.seat == 0
    deadline = time.monotonic()
    # 3. The rounds.
    while True:
        if owe and not inp.ready(deadline - time.monotonic()):
            if game.level_over:
                log("pacman: no init line after the end of level %d" % game.level)
            answer()
            owe = False
            continue
        line = inp.line()
        if line is None:
            return  # the match is over
        if line == "player 0 send info":
            answer()  # seat 1's turn
        elif line == "player 1 send info":
            pass  # seat 0 learns that seat 1 answered; the actions line follows
        elif line.startswith("{") and '"level"' in line:
            game.start_level(json.loads(line))
            deadline = time.monotonic()
        elif line.startswith("{") and '"pacman_action"' in line:
            a = json.loads(line)
            game.play_round(a["pacman_action"], a["ghosts_action"])
            if game.seat == 0:
                owe = True
                deadline = time.monotonic() + (LEVEL_WAIT if game.level_over else 0.0)
        elif line:
            log("pacman: unexpected line %.60r" % line)


def play_pacman(turn):
    """Run a Pac-Man bot: turn(game) returns the action (0..4) for each
    round. Returns when the input ends."""
    _play(PACMAN, lambda g: str(legal(turn(g))))


def play_ghosts(turn):
    """Run a ghosts bot: turn(game) returns the three ghosts' actions
    (0..4 each) for each round. Returns when the input ends."""

    def action(g):
        a = list(turn(g))
        if len(a) != 3:
            raise ValueError("turn returned %r, not three actions" % (a,))
        return "%d %d %d" % tuple(legal(x) for x in a)

    _play(GHOSTS, action)
