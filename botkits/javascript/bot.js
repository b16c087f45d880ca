// A Tanks bot: the strategy. This is the file to edit.
//
// Every turn, in this order:
//   1. dodge a bullet that would hit us this turn or the next;
//   2. shoot an enemy in line of fire (no indestructible block in between);
//   3. step out of an enemy's line of fire while our own bullet is still flying;
//   4. go back into the zone when we are about to leave it;
//   5. wait in ambush when the nearest enemy can step into our line of fire;
//   6. otherwise walk (breadth-first search) towards a cell in line with the
//      nearest enemy.
//
// The protocol (reading the state, writing the answer) is in tanks.js.
"use strict";

const tanks = require("./tanks");
const { BARRIER, NOT_DESTROYABLE, DIRECTIONS, DIRECTION_NAMES } = tanks;
const { step, samePoint, key, move, shoot, log } = tanks;

function turn(state) {
  const me = state.me;
  if (me === null) return null; // our tank is gone
  const at = me.pos;
  // Where every bullet will fly this turn, and the turn after (sets of key(cell)).
  const { now, soon } = bulletPaths(state);

  // Inside the zone this turn and the next (it shrinks every turn).
  const safe = (p) => state.inZone(p, state.zoneRadius - 1);
  // A cell we may move to this turn without being hit or burnt.
  const canStand = (p) => state.isFree(p) && !now.has(key(p)) && state.inZone(p);

  const enemies = state.enemies.slice().sort((a, b) => distance(at, a.pos) - distance(at, b.pos));

  // The directions we may move in this turn, best first: cells no bullet
  // reaches next turn, inside next turn's zone, out of enemy fire.
  function movesBestFirst() {
    const badness = (d) => {
      const p = step(at, d);
      return (soon.has(key(p)) ? 4 : 0) + (safe(p) ? 0 : 2) + (threatened(state, p, enemies) ? 1 : 0);
    };
    return DIRECTIONS.filter((d) => canStand(step(at, d))).sort((a, b) => badness(a) - badness(b));
  }

  // 1. Dodge: a bullet reaches our cell this turn or the next. (If it only
  //    arrives next turn, stepping into another bullet's way is no escape.)
  if (now.has(key(at)) || soon.has(key(at))) {
    for (const d of movesBestFirst()) {
      if (now.has(key(at)) || !soon.has(key(step(at, d)))) {
        log("dodge", DIRECTION_NAMES[d]);
        return move(d);
      }
    }
  }

  // 2. Shoot the nearest enemy in line of fire.
  if (!bulletInFlight(state, state.myId)) {
    for (const e of enemies) {
      const d = lineOfFire(state, at, e.pos);
      if (d !== null) {
        log("shoot", DIRECTION_NAMES[d], "at", e.userId);
        return shoot(d);
      }
    }
  }

  // 3. Our bullet is still flying, so we cannot shoot back: leave the line
  //    of an enemy that is close enough to hit us at once.
  if (threatened(state, at, enemies)) {
    for (const d of movesBestFirst()) {
      if (!threatened(state, step(at, d), enemies)) {
        log("take cover", DIRECTION_NAMES[d]);
        return move(d);
      }
    }
  }

  // The walks below avoid the cells bullets cross this turn.
  const passable = (p) => !now.has(key(p));

  // 4. Back into the zone before it burns us.
  if (!safe(at)) {
    log("back to the zone");
    let d = firstStep(state, at, safe, passable);
    if (d === null) {
      // next turn's zone is empty: at least stay in this one
      d = firstStep(state, at, (p) => state.inZone(p), passable);
    }
    return d === null ? null : move(d);
  }

  if (enemies.length === 0) return null;
  const target = enemies[0];

  // 5. Ambush: when the target can step into our line of fire, let it come
  //    (if it does, we shoot next turn). Walking towards its line while it
  //    walks towards ours, we would only swap rows with it forever.
  if (canStepIntoLine(state, target.pos, at)) {
    log("wait for", target.userId);
    return null;
  }

  // 6. Hunt: walk to the nearest cell in line of fire with the target.
  const inLine = (p) => safe(p) && lineOfFire(state, p, target.pos) !== null;
  log("hunt", target.userId);
  const d = firstStep(state, at, inLine, passable);
  return d === null ? null : move(d); // null: stay
}

function distance(a, b) {
  return Math.abs(a.x - b.x) + Math.abs(a.y - b.y);
}

function bulletInFlight(state, owner) {
  return state.bullets.some((b) => b.ownerId === owner);
}

// The cells every bullet crosses this turn (now) and next turn (soon), as
// sets of key(cell). A bullet moves 2 cells per turn and stops at the first
// barrier or indestructible block. Tanks are not counted as stops: they may
// move away.
function bulletPaths(state) {
  const now = new Set();
  const soon = new Set();
  for (const b of state.bullets) {
    let p = b.pos;
    for (let i = 0; i < 5; i++) {
      // its cell, then 2 cells this turn, 2 the next
      if (i > 0) p = step(p, b.direction);
      const c = state.at(p);
      if (!state.onBoard(p) || (c && (c.type === BARRIER || c.type === NOT_DESTROYABLE))) break;
      (i <= 2 ? now : soon).add(key(p));
    }
  }
  return { now, soon };
}

// The direction to shoot from p to hit target, or null: same row or column,
// and no indestructible block in between (water lets bullets pass, barriers
// break after enough hits).
function lineOfFire(state, p, target) {
  let d;
  if (samePoint(p, target)) return null;
  if (p.x === target.x) d = target.y > p.y ? tanks.UP : tanks.DOWN;
  else if (p.y === target.y) d = target.x > p.x ? tanks.RIGHT : tanks.LEFT;
  else return null;
  for (let q = step(p, d); !samePoint(q, target); q = step(q, d)) {
    const c = state.at(q);
    if (c && c.type === NOT_DESTROYABLE) return null;
  }
  return d;
}

// Whether the enemy standing at cell `enemy` can move in one step to a cell
// that is in our line of fire from p.
function canStepIntoLine(state, enemy, p) {
  return DIRECTIONS.some((d) => {
    const n = step(enemy, d);
    return state.isFree(n) && lineOfFire(state, p, n) !== null;
  });
}

// Whether an enemy that can shoot now would hit cell p this very turn: a new
// bullet flies 3 cells on its first turn, so nobody can dodge it.
function threatened(state, p, enemies) {
  for (const e of enemies) {
    if (bulletInFlight(state, e.userId) || distance(p, e.pos) > 3) continue;
    const d = lineOfFire(state, e.pos, p);
    if (d !== null && !barrierBetween(state, e.pos, p, d)) return true;
  }
  return false;
}

// Whether a barrier stands between cells a and b (b is reached from a going
// in direction d).
function barrierBetween(state, a, b, d) {
  for (let q = step(a, d); !samePoint(q, b); q = step(q, d)) {
    const c = state.at(q);
    if (c && c.type === BARRIER) return true;
  }
  return false;
}

// Breadth-first search: the first move of a shortest walk from start to a
// cell where goal(cell) holds, or null when there is none (or start already
// is one).
function firstStep(state, start, goal, passable) {
  if (goal(start)) return null;
  const seen = new Set([key(start)]);
  const queue = []; // [cell, first direction]
  for (const d of DIRECTIONS) {
    const n = step(start, d);
    if (state.isFree(n) && passable(n)) {
      seen.add(key(n));
      queue.push([n, d]);
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const [p, first] = queue[head];
    if (goal(p)) return first;
    for (const d of DIRECTIONS) {
      const n = step(p, d);
      if (!seen.has(key(n)) && state.isFree(n) && passable(n)) {
        seen.add(key(n));
        queue.push([n, first]);
      }
    }
  }
  return null;
}

tanks.play(turn);
