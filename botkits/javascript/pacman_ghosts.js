// A ghosts bot (role 1): the strategy. Copy it to start your own.
//
// Every round each of the three ghosts walks a shortest path, found by
// breadth-first search, to where the Pac-Man is. Each ghost tries the
// directions in its own order, so that they do not all take the same one of
// several shortest paths.
//
// The protocol (the seat, the init lines, the rounds, the framed answers) is
// in pacman.js; it claims the ghosts' role and plays on either seat.
"use strict";

const pacman = require("./pacman");
const { MOVES, STAY, WALL, step, same } = pacman;

const key = (p) => p[0] * 4096 + p[1];

function turn(g) {
  return g.ghosts.map((gh, j) => chase(g, gh, j));
}

// chase is the first action of a shortest walk from the ghost at from to
// the Pac-Man.
function chase(g, from, ghost) {
  if (same(from, g.pacman)) return STAY;
  const order = [0, 1, 2, 3].map((i) => MOVES[(i + ghost) % 4]);
  const seen = new Set([key(from)]);
  const queue = [];
  for (const a of order) {
    const n = step(from, a);
    if (g.at(n) !== WALL) {
      seen.add(key(n));
      queue.push([n, a]);
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const [at, first] = queue[i];
    if (same(at, g.pacman)) return first;
    for (const a of order) {
      const n = step(at, a);
      if (!seen.has(key(n)) && g.at(n) !== WALL) {
        seen.add(key(n));
        queue.push([n, first]);
      }
    }
  }
  return STAY;
}

if (require.main === module) pacman.playGhosts(turn);

module.exports = { turn };
