"""A Pac-Man bot (role 0): the strategy. Copy it to start your own.

Every round it walks to the nearest bean by breadth-first search, keeping off
the cells a ghost could reach this round (a ghost's cell and its neighbours,
unless the ghosts are frozen; nothing is dangerous while the Pac-Man cannot
be caught). With no safe bean in reach it takes the open portal (which ends
the level with a bonus), or else runs from the ghosts.

The protocol (the seat, the init lines, the rounds, the framed answers) is in
pacman.py; it claims the Pac-Man's role and plays on either seat.
"""

from collections import deque

import pacman
from pacman import BEAN, BONUS, MOVES, STAY, WALL, log, step


def turn(g):
    danger = dangerous(g)

    # The portal ends the level: go there only when no bean is left in reach.
    def walkable(p):
        return g.at(p) != WALL and p not in danger and not (g.portal_open and p == g.portal)

    a = first_step(g, walkable, lambda p: g.at(p) in (BEAN, BONUS))
    if a is not None:
        return a
    if g.portal_open:
        a = first_step(g, lambda p: g.at(p) != WALL and p not in danger, lambda p: p == g.portal)
        if a is not None:
            log("to the portal")
            return a
    return flee(g)


def dangerous(g):
    """The cells a ghost may reach this round: its own and, unless the ghosts
    are frozen, its neighbours."""
    danger = set()
    if g.invulnerable > 0:
        return danger
    frozen = g.skills[pacman.SKILL_FREEZE] > 0
    for gh in g.ghosts:
        danger.add(gh)
        if not frozen:
            for a in MOVES:
                danger.add(step(gh, a))
    return danger


def first_step(g, walkable, goal):
    """The first action of a shortest walk (breadth first over walkable
    cells) from the Pac-Man to a cell where goal holds; None if none."""
    seen = {g.pacman}
    queue = deque()
    for a in MOVES:
        n = step(g.pacman, a)
        if walkable(n):
            seen.add(n)
            queue.append((n, a))
    while queue:
        at, first = queue.popleft()
        if goal(at):
            return first
        for a in MOVES:
            n = step(at, a)
            if n not in seen and walkable(n):
                seen.add(n)
                queue.append((n, first))
    return None


def flee(g):
    """The action that ends farthest from the nearest ghost."""
    best, best_dist = STAY, -1
    for a in (STAY,) + MOVES:
        to = g.move(g.pacman, a)
        d = min(abs(gx - to[0]) + abs(gy - to[1]) for gx, gy in g.ghosts)
        if d > best_dist:
            best, best_dist = a, d
    return best


if __name__ == "__main__":
    pacman.play_pacman(turn)
