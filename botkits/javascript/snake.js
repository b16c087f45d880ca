// The Snake protocol: read the state from stdin, write the move to stdout.
//
// You should not need to edit this file: the strategy lives in
// snake_greedy.js (or your own copy of it).
//
// Every round the game writes one line of JSON (the state) to stdin and
// waits for one line on stdout: the cell the head moves to, {"X":x,"Y":y}.
// play() runs that loop, calling your turn function once per state.
//
// A cell is a point {x, y} = (row, column), both from 0; row 0 is the top row.
"use strict";

const readline = require("readline");

// Symbols of State.mat.
const WALL = "#";
const GROUND = ".";
const APPLE = "o"; // score +1
const SHIELD = "O"; // score +1 and a shield for 20 rounds
const SNAKE1 = "1"; // a cell of snake 1 (state.you === 1), head included
const SNAKE2 = "2";

function point(x, y) {
  return { x, y };
}

function samePoint(a, b) {
  return a.x === b.x && a.y === b.y;
}

// A string naming cell p, to use cells as keys of a Set or a Map.
function key(p) {
  return p.x + "," + p.y;
}

// The four cells a head at p can move to: up (row - 1), down, left
// (column - 1), right.
function neighbours(p) {
  return [point(p.x - 1, p.y), point(p.x + 1, p.y), point(p.x, p.y - 1), point(p.x, p.y + 1)];
}

function isItem(symbol) {
  return symbol === APPLE || symbol === SHIELD;
}

// Print a debug line on stderr: the replay and the web viewer show it next
// to the round it belongs to (up to 4 KiB per round). Never use console.log
// for this: stdout carries your answers, anything else there is bad output.
function log(...args) {
  console.error(...args);
}

// One round's view of the game.
class State {
  constructor(raw) {
    this.round = raw.round; // from 1
    this.roundToShrink = raw.round_to_shrink; // 1: the next round walls the next ring
    this.rows = raw.row_cnt;
    this.cols = raw.col_cnt;
    this.mat = raw.mat; // rows strings of cols symbols: mat[x][y]
    this.you = raw.you; // 1 or 2: your cells are "1" or "2" in mat
    this.head = point(raw.your_posx, raw.your_posy);
    // Status: -1 dead, 0 normal, k > 0 shielded for the next k rounds.
    this.yourStatus = raw.your_status;
    this.opponentStatus = raw.opponent_status;
    // Score: the length a snake grows to (its tail stays put while the body
    // is shorter).
    this.yourScore = raw.your_score;
    this.opponentScore = raw.opponent_score;
    this.yourBody = (raw.your_body || []).map((c) => point(c[0], c[1])); // head first
    this.opponentBody = (raw.opponent_body || []).map((c) => point(c[0], c[1]));
    // The opponent's head, or null once it is dead.
    this.opponentHead =
      this.opponentStatus >= 0 && this.opponentBody.length > 0
        ? point(raw.opponent_posx, raw.opponent_posy)
        : null;
  }

  // Whether cell p is on the board.
  inside(p) {
    return p.x >= 0 && p.y >= 0 && p.x < this.rows && p.y < this.cols;
  }

  // The symbol of cell p; outside the board is a wall.
  at(p) {
    if (!this.inside(p)) return WALL;
    const row = this.mat[p.x];
    return p.y < row.length ? row[p.y] : WALL;
  }

  // Whether p is on the board and neither a wall nor a snake's cell.
  isFree(p) {
    const c = this.at(p);
    return c !== WALL && c !== SNAKE1 && c !== SNAKE2;
  }

  // P = ceil(4 * rows * cols / min(rows, cols)): every P rounds the next
  // ring (ring 0 is the outermost one) becomes wall.
  shrinkPeriod() {
    const n = 4 * this.rows * this.cols;
    const d = Math.min(this.rows, this.cols);
    return Math.floor((n + d - 1) / d);
  }

  // How many rings are wall by now: rings 0 .. ringsClosed() - 1.
  ringsClosed() {
    return Math.min(
      Math.floor(this.round / this.shrinkPeriod()),
      Math.floor((Math.min(this.rows, this.cols) + 1) / 2)
    );
  }

  // The ring cell p lies on: 0 for the outermost rows and columns.
  ring(p) {
    return Math.min(p.x, p.y, this.rows - 1 - p.x, this.cols - 1 - p.y);
  }
}

// A move when the strategy failed: a free neighbour if there is one.
function fallback(state) {
  const ns = neighbours(state.head);
  return ns.find((n) => state.isFree(n)) || ns[0];
}

// Run the bot: for every state line on stdin, call turn(state) and write the
// cell it returns, {x, y}, as {"X":x,"Y":y} on stdout. Exits when stdin ends.
function play(turn) {
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    const state = new State(JSON.parse(line));
    let to;
    try {
      to = turn(state);
      if (!to || !Number.isInteger(to.x) || !Number.isInteger(to.y)) {
        throw new Error("turn returned " + JSON.stringify(to) + ", not a cell {x, y}");
      }
    } catch (err) {
      // A bug in the strategy costs one move, not the whole match.
      log(err && err.stack ? err.stack : String(err));
      to = fallback(state);
    }
    // One write per answer, newline included. Node writes to a pipe
    // synchronously on Linux, so the line leaves at once: nothing stays in
    // a buffer (an answer that never leaves is a timeout).
    process.stdout.write('{"X":' + to.x + ',"Y":' + to.y + "}\n");
  });
  lines.on("close", () => process.exit(0));
}

module.exports = {
  WALL,
  GROUND,
  APPLE,
  SHIELD,
  SNAKE1,
  SNAKE2,
  point,
  samePoint,
  key,
  neighbours,
  isItem,
  log,
  State,
  play,
};
