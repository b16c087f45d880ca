// A Pac-Man bot (role 0): the strategy. Copy it to start your own.
//
// Every round it walks to the nearest bean by breadth-first search, keeping
// off the cells a ghost could reach this round (a ghost's cell and its
// neighbours, unless the ghosts are frozen; nothing is dangerous while the
// Pac-Man cannot be caught). With no safe bean in reach it takes the open
// portal (which ends the level with a bonus), or else runs from the ghosts.
//
// The protocol (the seat, the init lines, the rounds, the framed answers) is
// in pacman.js; it claims the Pac-Man's role and plays on either seat.
"use strict";

const pacman = require("./pacman");
const { BEAN, BONUS, MOVES, STAY, WALL, log, step, same } = pacman;

const key = (p) => p[0] * 4096 + p[1];

function turn(g) {
  const danger = dangerous(g);
  // The portal ends the level: go there only when no bean is left in reach.
  const walkable = (p) => g.at(p) !== WALL && !danger.has(key(p)) && !(g.portalOpen && same(p, g.portal));
  let a = firstStep(g, walkable, (p) => g.at(p) === BEAN || g.at(p) === BONUS);
  if (a !== null) return a;
  if (g.portalOpen) {
    a = firstStep(g, (p) => g.at(p) !== WALL && !danger.has(key(p)), (p) => same(p, g.portal));
    if (a !== null) {
      log("to the portal");
      return a;
    }
  }
  return flee(g);
}

// dangerous is the set of cells a ghost may reach this round: its own and,
// unless the ghosts are frozen, its neighbours.
function dangerous(g) {
  const danger = new Set();
  if (g.invulnerable > 0) return danger;
  const frozen = g.skills[pacman.SKILL_FREEZE] > 0;
  for (const gh of g.ghosts) {
    danger.add(key(gh));
    if (!frozen) for (const a of MOVES) danger.add(key(step(gh, a)));
  }
  return danger;
}

// firstStep is the first action of a shortest walk (breadth first over
// walkable cells) from the Pac-Man to a cell where goal holds; null if none.
function firstStep(g, walkable, goal) {
  const seen = new Set([key(g.pacman)]);
  const queue = [];
  for (const a of MOVES) {
    const n = step(g.pacman, a);
    if (walkable(n)) {
      seen.add(key(n));
      queue.push([n, a]);
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const [at, first] = queue[i];
    if (goal(at)) return first;
    for (const a of MOVES) {
      const n = step(at, a);
      if (!seen.has(key(n)) && walkable(n)) {
        seen.add(key(n));
        queue.push([n, first]);
      }
    }
  }
  return null;
}

// flee is the action that ends farthest from the nearest ghost.
function flee(g) {
  let best = STAY;
  let bestDist = -1;
  for (const a of [STAY, ...MOVES]) {
    const to = g.move(g.pacman, a);
    let d = Infinity;
    for (const [gx, gy] of g.ghosts) d = Math.min(d, Math.abs(gx - to[0]) + Math.abs(gy - to[1]));
    if (d > bestDist) {
      best = a;
      bestDist = d;
    }
  }
  return best;
}

if (require.main === module) pacman.playPacman(turn);

module.exports = { turn };
