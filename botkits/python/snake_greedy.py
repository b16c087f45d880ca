"""A greedy Snake bot: the strategy. Copy it to start your own.

Every round, for each of the four moves it searches (breadth first) from the
cell the move leads to, avoiding walls and snake bodies, and takes, in this
order of preference:
  1. a bite: when we are the stronger snake (shielded, or longer), a head
     entering the opponent's body kills the opponent;
  2. a move the opponent's head cannot also reach this round, unless we
     would win that head-on;
  3. a move that leaves at least as much room as our length;
  4. a move onto a cell that is not about to become wall;
  5. a move from which an item (apple or shield) is reachable, the nearest
     item first;
  6. the move with the most room (reachable cells).

The search knows that the board changes as the snakes move: a body segment
is gone after as many moves as there are segments behind it (plus the
rounds the snake still grows), and a ring is usable only until it closes.

The protocol (reading the state, writing the answer) is in snake.py.
"""

from collections import deque

import snake
from snake import ITEMS, WALL, log, neighbours

NEVER = 1 << 30


class Board:
    """When each cell can be entered: from move free_at (1 is this round's
    move) until, but not including, the move its ring closes."""

    def __init__(self, s):
        self.s = s
        self.free_at = {}   # cell -> first move it may be entered; absent: 0
        self.mine = set()   # our body
        self.theirs = set()  # the opponent's body
        self.near = set()   # cells the opponent's head may enter this round
        self.closed = s.rings_closed()
        self.to_close = s.round_to_shrink
        self.period = s.shrink_period()
        for x in range(s.rows):
            row = s.mat[x]
            for y in range(s.cols):
                if y >= len(row) or row[y] == WALL:
                    self.free_at[(x, y)] = NEVER
        self._mark(s.your_body, s.your_score, self.mine)
        if s.opponent_head is not None:
            self._mark(s.opponent_body, s.opponent_score, self.theirs)
            for p in neighbours(s.opponent_head):
                if s.inside(p):
                    self.near.add(p)

    def _mark(self, body, score, owner):
        # Segment k of a body of length L (head first) leaves after L - k
        # moves, later while the snake grows (its score is above its length).
        grow = max(0, score - len(body))
        for k, p in enumerate(body):
            if not self.s.inside(p):
                continue
            owner.add(p)
            if self.free_at.get(p, 0) != NEVER:
                self.free_at[p] = max(self.free_at.get(p, 0), len(body) - k + grow)

    def close_at(self, p):
        """The move from which p's ring is wall."""
        ring = self.s.ring(p)
        if ring < self.closed:
            return 0
        return self.to_close + (ring - self.closed) * self.period

    def usable(self, p, d, grow):
        """Whether the head may be on p after move d, when our tail stays put
        for grow more rounds than it would now (we ate on the way)."""
        if not self.s.inside(p):
            return False
        free = self.free_at.get(p, 0)
        if p in self.mine and free != NEVER:
            free += grow
        return free <= d < self.close_at(p)

    def legal(self, p):
        """Entering p with this round's move does not kill the snake."""
        return self.s.inside(p) and self.free_at.get(p, 0) <= 1

    def explore(self, start, head):
        """Search breadth first from start, where this round's move puts the
        head. Returns (moves from start to the nearest item or -1, number
        of cells reachable). The cells the opponent's head may enter count
        as taken: it may close a pocket's exit."""
        grow = 1 if self.s.at(start) in ITEMS else 0  # eating keeps our tail
        seen = {head, start}
        queue = deque([(start, 1)])
        dist, room = -1, 0
        while queue:
            at, d = queue.popleft()
            room += 1
            if dist < 0 and self.s.at(at) in ITEMS:
                dist = d - 1
            for n in neighbours(at):
                if n not in seen and n not in self.near and self.usable(n, d + 1, grow):
                    seen.add(n)
                    queue.append((n, d + 1))
        return dist, room


def stronger(s):
    """Whether we win a collision: a shield beats no shield, then the longer
    body wins (a tie kills both head-on, and the snake entering a body
    loses)."""
    mine, theirs = s.your_status > 0, s.opponent_status > 0
    if mine != theirs:
        return mine
    return len(s.your_body) > len(s.opponent_body)


def turn(s):
    b = Board(s)
    head = s.head
    strong = stronger(s)
    best, best_key = None, None
    for n in neighbours(head):
        bite = strong and s.at(n) != WALL and n in b.theirs and not b.legal(n)
        if not b.legal(n) and not bite:
            continue
        risky = n in b.near and not strong
        doom = not b.usable(n, 1, 0)
        dist, room = b.explore(n, head)
        tight = room < len(s.your_body)
        # Smaller is better, element by element.
        key = (not bite, risky, tight, doom, dist < 0, dist, -room)
        if best_key is None or key < best_key:
            best, best_key = n, key
            best_info = (dist, room)
    if best is None:
        log("trapped")
        return neighbours(head)[0]  # every move loses: any neighbour will do
    log("to", best, "item dist", best_info[0], "room", best_info[1])
    return best


if __name__ == "__main__":
    snake.play(turn)
