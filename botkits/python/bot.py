"""A Tanks bot: the strategy. This is the file to edit.

Every turn, in this order:
  1. dodge a bullet that would hit us this turn or the next;
  2. shoot an enemy in line of fire (no indestructible block in between);
  3. step out of an enemy's line of fire while our own bullet is still flying;
  4. go back into the zone when we are about to leave it;
  5. wait in ambush when the nearest enemy can step into our line of fire;
  6. otherwise walk (breadth-first search) towards a cell in line with the
     nearest enemy.

The protocol (reading the state, writing the answer) is in tanks.py.
"""

from collections import deque

import tanks
from tanks import (BARRIER, DIRECTIONS, DIRECTION_NAMES, NOT_DESTROYABLE,
                   log, move, shoot, step)


def turn(state):
    me = state.me
    if me is None:
        return None  # our tank is gone
    at = me.pos
    # Where every bullet will fly this turn, and the turn after.
    now, soon = bullet_paths(state)

    def safe(p):
        # Inside the zone this turn and the next (it shrinks every turn).
        return state.in_zone(p, state.zone_radius - 1)

    def can_stand(p):
        # A cell we may move to this turn without being hit or burnt.
        return state.is_free(p) and p not in now and state.in_zone(p)

    enemies = sorted(state.enemies, key=lambda e: distance(at, e.pos))

    def moves_best_first():
        # The directions we may move in this turn, best first: cells no
        # bullet reaches next turn, inside next turn's zone, out of fire.
        options = [d for d in DIRECTIONS if can_stand(step(at, d))]

        def badness(d):
            p = step(at, d)
            return (p in soon, not safe(p), threatened(state, p, enemies))

        return sorted(options, key=badness)

    # 1. Dodge: a bullet reaches our cell this turn or the next. (If it only
    #    arrives next turn, stepping into another bullet's way is no escape.)
    if at in now or at in soon:
        for d in moves_best_first():
            if at in now or step(at, d) not in soon:
                log("dodge", DIRECTION_NAMES[d])
                return move(d)

    # 2. Shoot the nearest enemy in line of fire.
    if not bullet_in_flight(state, state.my_id):
        for e in enemies:
            d = line_of_fire(state, at, e.pos)
            if d is not None:
                log("shoot", DIRECTION_NAMES[d], "at", e.user_id)
                return shoot(d)

    # 3. Our bullet is still flying, so we cannot shoot back: leave the line
    #    of an enemy that is close enough to hit us at once.
    if threatened(state, at, enemies):
        for d in moves_best_first():
            if not threatened(state, step(at, d), enemies):
                log("take cover", DIRECTION_NAMES[d])
                return move(d)

    # The walks below avoid the cells bullets cross this turn.
    def passable(p):
        return p not in now

    # 4. Back into the zone before it burns us.
    if not safe(at):
        log("back to the zone")
        d = first_step(state, at, safe, passable)
        if d is None:  # next turn's zone is empty: at least stay in this one
            d = first_step(state, at, state.in_zone, passable)
        return move(d) if d is not None else None

    if not enemies:
        return None
    target = enemies[0]

    # 5. Ambush: when the target can step into our line of fire, let it come
    #    (if it does, we shoot next turn). Walking towards its line while it
    #    walks towards ours, we would only swap rows with it forever.
    if can_step_into_line(state, target.pos, at):
        log("wait for", target.user_id)
        return None

    # 6. Hunt: walk to the nearest cell in line of fire with the target.
    def in_line(p):
        return safe(p) and line_of_fire(state, p, target.pos) is not None

    log("hunt", target.user_id)
    d = first_step(state, at, in_line, passable)
    return move(d) if d is not None else None  # None: stay


def distance(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def bullet_in_flight(state, owner):
    return any(b.owner_id == owner for b in state.bullets)


def bullet_paths(state):
    """The cells every bullet crosses this turn (now) and next turn (soon).

    A bullet moves 2 cells per turn and stops at the first barrier or
    indestructible block. Tanks are not counted as stops: they may move away.
    """
    now, soon = set(), set()
    for b in state.bullets:
        p = b.pos
        for i in range(5):  # its cell, then 2 cells this turn, 2 the next
            if i > 0:
                p = step(p, b.direction)
            c = state.at(p)
            if not state.on_board(p) or (c and c.type in (BARRIER, NOT_DESTROYABLE)):
                break
            (now if i <= 2 else soon).add(p)
    return now, soon


def line_of_fire(state, p, target):
    """The direction to shoot from p to hit target, or None: same row or
    column, and no indestructible block in between (water lets bullets
    pass, barriers break after enough hits)."""
    if p == target:
        return None
    if p[0] == target[0]:
        d = tanks.UP if target[1] > p[1] else tanks.DOWN
    elif p[1] == target[1]:
        d = tanks.RIGHT if target[0] > p[0] else tanks.LEFT
    else:
        return None
    q = step(p, d)
    while q != target:
        c = state.at(q)
        if c and c.type == NOT_DESTROYABLE:
            return None
        q = step(q, d)
    return d


def can_step_into_line(state, enemy, p):
    """Whether the enemy standing at cell `enemy` can move in one step to a
    cell that is in our line of fire from p."""
    for d in DIRECTIONS:
        n = step(enemy, d)
        if state.is_free(n) and line_of_fire(state, p, n) is not None:
            return True
    return False


def threatened(state, p, enemies):
    """Whether an enemy that can shoot now would hit cell p this very turn:
    a new bullet flies 3 cells on its first turn, so nobody can dodge it."""
    for e in enemies:
        if bullet_in_flight(state, e.user_id) or distance(p, e.pos) > 3:
            continue
        d = line_of_fire(state, e.pos, p)
        if d is not None and not barrier_between(state, e.pos, p, d):
            return True
    return False


def barrier_between(state, a, b, d):
    """Whether a barrier stands between cells a and b (b is reached from a
    going in direction d)."""
    q = step(a, d)
    while q != b:
        c = state.at(q)
        if c and c.type == BARRIER:
            return True
        q = step(q, d)
    return False


def first_step(state, start, goal, passable):
    """Breadth-first search: the first move of a shortest walk from start to
    a cell where goal(cell) holds, or None when there is none (or start
    already is one)."""
    if goal(start):
        return None
    seen = {start}
    queue = deque()
    for d in DIRECTIONS:
        n = step(start, d)
        if state.is_free(n) and passable(n):
            seen.add(n)
            queue.append((n, d))
    while queue:
        p, first = queue.popleft()
        if goal(p):
            return first
        for d in DIRECTIONS:
            n = step(p, d)
            if n not in seen and state.is_free(n) and passable(n):
                seen.add(n)
                queue.append((n, first))
    return None


if __name__ == "__main__":
    tanks.play(turn)
