// The Tanks protocol: read the state from stdin, write actions to stdout.
//
// You should not need to edit this file: the strategy lives in bot.js.
//
// Every turn the game writes one line of JSON (the state) to stdin and waits
// for one line on stdout: a JSON array of actions, e.g. [{"Type":1,"Direction":3}].
// play() runs that loop, calling your turn function once per state.
"use strict";

const readline = require("readline");

// Object types (the "Type" of a cell).
const TANK = 0;
const BARRIER = 1; // bullets damage it; tanks cannot enter
const NOT_DESTROYABLE = 2; // stops bullets; tanks cannot enter
const WATER = 3; // bullets fly over it; tanks cannot enter

// Directions. (0,0) is the bottom-left cell and Y grows upward.
const UP = 0;
const DOWN = 1;
const LEFT = 2;
const RIGHT = 3;
const DIRECTIONS = [UP, DOWN, LEFT, RIGHT];
const DIRECTION_NAMES = ["up", "down", "left", "right"];

// Action types.
const MOVE = 0;
const SHOOT = 1;

// A cell is a point {x, y}.
function point(x, y) {
  return { x, y };
}

// The neighbour of cell p in direction d.
function step(p, d) {
  switch (d) {
    case UP:
      return point(p.x, p.y + 1);
    case DOWN:
      return point(p.x, p.y - 1);
    case LEFT:
      return point(p.x - 1, p.y);
    default:
      return point(p.x + 1, p.y);
  }
}

function samePoint(a, b) {
  return a.x === b.x && a.y === b.y;
}

// A string naming cell p, to use cells as keys of a Set or a Map.
function key(p) {
  return p.x + "," + p.y;
}

// The action "move one cell in direction d".
function move(d) {
  return { Type: MOVE, Direction: d };
}

// The action "shoot in direction d" (ignored while your bullet flies).
function shoot(d) {
  return { Type: SHOOT, Direction: d };
}

// Print a debug line on stderr: the replay and the web viewer show it next
// to the turn it belongs to (up to 4 KiB per turn). Never use console.log
// for this: stdout carries your answers, anything else there is bad output.
function log(...args) {
  console.error(...args);
}

// One turn's view of the game.
class State {
  constructor(raw, myId) {
    this.myId = myId;
    // Every non-empty cell: {pos, type, health, userId (tanks only)}.
    this.contents = raw.ContentsInfo.map((c) => ({
      pos: point(c.Coordinates.X, c.Coordinates.Y),
      type: c.Type,
      health: c.HealthCount,
      userId: c.UserId,
    }));
    // Bullets in flight, 2 cells per turn: {pos, direction, ownerId}.
    this.bullets = raw.BulletsInfo.map((b) => ({
      pos: point(b.Coordinates.X, b.Coordinates.Y),
      direction: b.Direction,
      ownerId: b.OwnerId,
    }));
    this.zoneRadius = raw.ZoneRadius;
    // Board size, the outer ring of indestructible blocks included.
    this.width = 0;
    this.height = 0;
    this.cells = new Map(); // key(pos) -> content
    for (const c of this.contents) {
      this.width = Math.max(this.width, c.pos.x + 1);
      this.height = Math.max(this.height, c.pos.y + 1);
      this.cells.set(key(c.pos), c);
    }
    const tanks = this.contents.filter((c) => c.type === TANK);
    this.me = tanks.find((t) => t.userId === myId) || null;
    this.enemies = tanks.filter((t) => t.userId !== myId);
  }

  // The content at cell p, or null when the cell is empty.
  at(p) {
    return this.cells.get(key(p)) || null;
  }

  onBoard(p) {
    return p.x >= 0 && p.y >= 0 && p.x < this.width && p.y < this.height;
  }

  // Whether a tank may move into cell p (bullets do not block it).
  isFree(p) {
    return this.onBoard(p) && !this.cells.has(key(p));
  }

  // Whether cell p is inside the zone of the given radius (default: the
  // current one). A tank outside loses 1 health per turn, and the radius
  // shrinks by 1 every turn.
  inZone(p, radius = this.zoneRadius) {
    const r = radius;
    const inside = (c, s) =>
      Math.floor(s / 2) - r + (s % 2) <= c && c <= Math.floor(s / 2) + r - 1;
    return inside(p.x, this.width) && inside(p.y, this.height);
  }
}

// Run the bot: for every state line on stdin, call turn(state) and write its
// answer (one action, an array of actions, or null for nothing) as one line
// on stdout. Exits when stdin ends.
function play(turn) {
  const myId = process.env.ARENA_BOT_ID || ""; // our tank's UserId
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    let actions;
    try {
      actions = turn(new State(JSON.parse(line), myId));
    } catch (err) {
      // A bug in the strategy costs one turn, not the whole match.
      log(err && err.stack ? err.stack : String(err));
      actions = null;
    }
    if (actions == null) actions = [];
    if (!Array.isArray(actions)) actions = [actions];
    // One write per answer, newline included. Node writes to a pipe
    // synchronously on Linux, so the line leaves at once: nothing stays in
    // a buffer (an answer that never leaves is a timeout).
    process.stdout.write(JSON.stringify(actions) + "\n");
  });
  lines.on("close", () => process.exit(0));
}

module.exports = {
  TANK,
  BARRIER,
  NOT_DESTROYABLE,
  WATER,
  UP,
  DOWN,
  LEFT,
  RIGHT,
  DIRECTIONS,
  DIRECTION_NAMES,
  MOVE,
  SHOOT,
  point,
  step,
  samePoint,
  key,
  move,
  shoot,
  log,
  State,
  play,
};
