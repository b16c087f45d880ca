// A greedy Snake bot: the strategy. Copy it to start your own.
//
// Every round, for each of the four moves it searches (breadth first) from
// the cell the move leads to, avoiding walls and snake bodies, and takes, in
// this order of preference:
//   1. a bite: when we are the stronger snake (shielded, or longer), a head
//      entering the opponent's body kills the opponent;
//   2. a move the opponent's head cannot also reach this round, unless we
//      would win that head-on;
//   3. a move that leaves at least as much room as our length;
//   4. a move onto a cell that is not about to become wall;
//   5. a move from which an item (apple or shield) is reachable, the nearest
//      item first;
//   6. the move with the most room (reachable cells).
//
// The search knows that the board changes as the snakes move: a body segment
// is gone after as many moves as there are segments behind it (plus the
// rounds the snake still grows), and a ring is usable only until it closes.
//
// The protocol (reading the state, writing the answer) is in snake.js.
"use strict";

const snake = require("./snake");
const { WALL, neighbours, isItem, log } = snake;

const NEVER = 1 << 30;

// When each cell can be entered: from move freeAt (1 is this round's move)
// until, but not including, the move its ring closes.
class Board {
  constructor(s) {
    this.s = s;
    const n = s.rows * s.cols;
    this.freeAt = new Array(n).fill(0);
    this.mine = new Array(n).fill(false); // our body
    this.theirs = new Array(n).fill(false); // the opponent's body
    this.near = new Array(n).fill(false); // cells the opponent's head may enter this round
    this.closed = s.ringsClosed();
    this.toClose = s.roundToShrink;
    this.period = s.shrinkPeriod();
    for (let x = 0; x < s.rows; x++) {
      for (let y = 0; y < s.cols; y++) {
        if (s.at({ x, y }) === WALL) this.freeAt[x * s.cols + y] = NEVER;
      }
    }
    this.mark(s.yourBody, s.yourScore, this.mine);
    if (s.opponentHead) {
      this.mark(s.opponentBody, s.opponentScore, this.theirs);
      for (const p of neighbours(s.opponentHead)) {
        if (s.inside(p)) this.near[this.index(p)] = true;
      }
    }
  }

  index(p) {
    return p.x * this.s.cols + p.y;
  }

  // Segment k of a body of length L (head first) leaves after L - k moves,
  // later while the snake grows (its score is above its length).
  mark(body, score, owner) {
    const grow = Math.max(0, score - body.length);
    body.forEach((p, k) => {
      if (!this.s.inside(p)) return;
      const i = this.index(p);
      owner[i] = true;
      if (this.freeAt[i] !== NEVER) this.freeAt[i] = Math.max(this.freeAt[i], body.length - k + grow);
    });
  }

  // The move from which p's ring is wall.
  closeAt(p) {
    const ring = this.s.ring(p);
    if (ring < this.closed) return 0;
    return this.toClose + (ring - this.closed) * this.period;
  }

  // Whether the head may be on p after move d, when our tail stays put for
  // grow more rounds than it would now (we ate on the way).
  usable(p, d, grow) {
    if (!this.s.inside(p)) return false;
    const i = this.index(p);
    let free = this.freeAt[i];
    if (this.mine[i] && free !== NEVER) free += grow;
    return free <= d && d < this.closeAt(p);
  }

  // Entering p with this round's move does not kill the snake.
  legal(p) {
    return this.s.inside(p) && this.freeAt[this.index(p)] <= 1;
  }

  // Search breadth first from start, where this round's move puts the head.
  // Returns the moves from start to the nearest item (-1: none in reach) and
  // the number of cells reachable. The cells the opponent's head may enter
  // count as taken: it may close a pocket's exit.
  explore(start, head) {
    const grow = isItem(this.s.at(start)) ? 1 : 0; // eating keeps our tail
    const seen = new Array(this.freeAt.length).fill(false);
    seen[this.index(head)] = true;
    seen[this.index(start)] = true;
    const queue = [{ at: start, d: 1 }];
    let dist = -1;
    let room = 0;
    for (let q = 0; q < queue.length; q++) {
      const { at, d } = queue[q];
      room++;
      if (dist < 0 && isItem(this.s.at(at))) dist = d - 1;
      for (const n of neighbours(at)) {
        if (!this.s.inside(n)) continue;
        const i = this.index(n);
        if (!seen[i] && !this.near[i] && this.usable(n, d + 1, grow)) {
          seen[i] = true;
          queue.push({ at: n, d: d + 1 });
        }
      }
    }
    return { dist, room };
  }
}

// Whether we win a collision: a shield beats no shield, then the longer body
// wins (a tie kills both head-on, and the snake entering a body loses).
function stronger(s) {
  const mine = s.yourStatus > 0;
  const theirs = s.opponentStatus > 0;
  if (mine !== theirs) return mine;
  return s.yourBody.length > s.opponentBody.length;
}

// Compare two options: negative when a is better.
function compare(a, b) {
  const keys = ["bite", "risky", "tight", "doom"];
  const wanted = [true, false, false, false];
  for (let k = 0; k < keys.length; k++) {
    if (a[keys[k]] !== b[keys[k]]) return a[keys[k]] === wanted[k] ? -1 : 1;
  }
  if (a.dist >= 0 !== b.dist >= 0) return a.dist >= 0 ? -1 : 1;
  if (a.dist !== b.dist) return a.dist - b.dist;
  return b.room - a.room;
}

function turn(s) {
  const b = new Board(s);
  const head = s.head;
  const strong = stronger(s);
  let best = null;
  for (const n of neighbours(head)) {
    const bite = strong && s.at(n) !== WALL && b.theirs[b.index(n)] && !b.legal(n);
    if (!b.legal(n) && !bite) continue;
    const o = {
      to: n,
      bite,
      risky: b.near[b.index(n)] && !strong,
      doom: !b.usable(n, 1, 0),
      ...b.explore(n, head),
    };
    o.tight = o.room < s.yourBody.length;
    if (best === null || compare(o, best) < 0) best = o;
  }
  if (best === null) {
    log("trapped");
    return neighbours(head)[0]; // every move loses: any neighbour will do
  }
  log("to", best.to.x + "," + best.to.y, "item dist", best.dist, "room", best.room);
  return best.to;
}

snake.play(turn);
