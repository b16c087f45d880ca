"""A ghosts bot (role 1): the strategy. Copy it to start your own.

Every round each of the three ghosts walks a shortest path, found by
breadth-first search, to where the Pac-Man is. Each ghost tries the
directions in its own order, so that they do not all take the same one of
several shortest paths.

The protocol (the seat, the init lines, the rounds, the framed answers) is in
pacman.py; it claims the ghosts' role and plays on either seat.
"""

from collections import deque

import pacman
from pacman import MOVES, STAY, WALL, step


def turn(g):
    return [chase(g, gh, j) for j, gh in enumerate(g.ghosts)]


def chase(g, frm, ghost):
    """The first action of a shortest walk from the ghost at frm to the
    Pac-Man."""
    if frm == g.pacman:
        return STAY
    order = [MOVES[(i + ghost) % 4] for i in range(4)]
    seen = {frm}
    queue = deque()
    for a in order:
        n = step(frm, a)
        if g.at(n) != WALL:
            seen.add(n)
            queue.append((n, a))
    while queue:
        at, first = queue.popleft()
        if at == g.pacman:
            return first
        for a in order:
            n = step(at, a)
            if n not in seen and g.at(n) != WALL:
                seen.add(n)
                queue.append((n, first))
    return STAY


if __name__ == "__main__":
    pacman.play_ghosts(turn)
