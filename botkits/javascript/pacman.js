// The Pac-Man-vs-ghosts protocol (the Saiblo judger's): read the seat, read
// the init line, then loop over the rounds.
//
// You should not need to edit this file: the strategies live in
// pacman_runner.js (the Pac-Man) and pacman_ghosts.js (the three ghosts).
//
// One bot plays the Pac-Man (role 0), the other the three ghosts (role 1);
// the role is claimed by the bot's first message, whatever its seat. The
// platform writes plain lines to stdin:
//   - the seat, "0" or "1";
//   - at each level start the init line (JSON: the board, positions, scores);
//   - "player 0 send info" / "player 1 send info" when the other seat answered;
//   - after each round the actions line {"pacman_action": 3, "ghosts_action": [0, 2, 4]}.
// It sends no state during a level: Game.playRound() replays the rules on
// each actions line, so the Game you get is up to date (positions, the board
// without the eaten beans, skills, scores, portal).
//
// The bot answers with a 4-byte big-endian length, then the UTF-8 JSON
// message: {"role":0,"action":"3"} for the Pac-Man, {"role":1,"action":"1 0 4"}
// for the ghosts. Seat 0 answers after the init line and after each actions
// line (after the next level's init line when that round ended a level);
// seat 1 after each "player 0 send info". playPacman() / playGhosts() do all
// of this.
//
// This is a copy of the Python kit's pacman.py, rule for rule; the engine's
// tests (engine/pacman/kits_test.go) replay real matches through both.
"use strict";

// Roles.
const PACMAN = 0;
const GHOSTS = 1;

// Cell values of Game.board.
const WALL = 0;
const EMPTY = 1;
const BEAN = 2; // 1 point
const BONUS = 3; // a bonus bean: 2 points
const SPEED = 4; // skill items, picked up by walking over them
const MAGNET = 5;
const SHIELD_UP = 6;
const DOUBLE = 7;
const FREEZE = 8;
const PORTAL = 9;

// Actions. "Up" is x + 1: rows grow upwards.
const STAY = 0;
const UP = 1; // x + 1
const LEFT = 2; // y - 1
const DOWN = 3; // x - 1
const RIGHT = 4; // y + 1
const MOVES = [UP, LEFT, DOWN, RIGHT];
const DELTA = [[0, 0], [1, 0], [0, -1], [-1, 0], [0, 1]];

// Indices of Game.skills (pacman_skill_status).
const SKILL_DOUBLE = 0; // beans score double
const SKILL_SPEED = 1; // the Pac-Man moves twice per round
const SKILL_MAGNET = 2; // it eats the 3x3 square around it
const SKILL_SHIELD = 3; // a count: each absorbs one catch
const SKILL_FREEZE = 4; // the ghosts stand still

// Per level: the rounds it lasts and the round after which the portal opens
// (0: no portal).
const LEVELS = [[500, 60], [400, 50], [300, 0]];

// step is where action a leads from cell p = [x, y], walls not considered.
function step(p, a) {
  const d = a >= 0 && a <= 4 ? DELTA[a] : DELTA[STAY];
  return [p[0] + d[0], p[1] + d[1]];
}

// same tells whether two cells are the same.
function same(p, q) {
  return p[0] === q[0] && p[1] === q[1];
}

// log prints a debug line on stderr: the replay and the web viewer show it
// next to the round it belongs to (up to 4 KiB per round).
function log(...args) {
  process.stderr.write(args.join(" ") + "\n");
}

// legal is a if it is an action 0..4, else STAY: anything else would be an
// illegal action, which loses the match.
function legal(a) {
  return Number.isInteger(a) && a >= 0 && a <= 4 ? a : STAY;
}

// Game is what the bot knows: the level's init line, updated round by
// round from the actions.
class Game {
  constructor(role) {
    this.seat = -1;
    this.role = role;
    this.level = 0; // 1..3
    this.round = 0; // rounds played in this level
    this.maxRounds = 0; // the level ends (ghosts +75) after this many rounds
    this.size = 0;
    this.board = []; // board[x][y]; eaten beans and items become EMPTY
    this.pacman = [0, 0];
    this.ghosts = [[0, 0], [0, 0], [0, 0]];
    // Skills in effect in the next round, indexed by SKILL_*: rounds
    // left, or the shield count.
    this.skills = [0, 0, 0, 0, 0];
    this.invulnerable = 0; // > 0: the Pac-Man cannot be caught next round
    this.score = [0, 0]; // Pac-Man, ghosts
    this.beansLeft = 0;
    this.portal = [-1, -1]; // [-1, -1] on level 3
    this.portalOpen = false; // stepping on it ends the level, with a bonus
    this.levelOver = false; // the last round ended the level
    this.gameOver = false; // and it was the last level
    this.portalAt = 0;
    this.survival = 0;
    this.catches = 0;
  }

  inside(p) {
    return p[0] >= 0 && p[0] < this.size && p[1] >= 0 && p[1] < this.size;
  }

  // at is the value of cell p; outside the board is a wall.
  at(p) {
    return this.inside(p) ? this.board[p[0]][p[1]] : WALL;
  }

  // move is where action a really takes a piece from p: into a wall it stays.
  move(p, a) {
    const q = step(p, a);
    return this.at(q) !== WALL ? q : p;
  }

  // startLevel takes a level's init line (already decoded).
  startLevel(init) {
    this.level = init.level;
    this.round = init.round;
    this.size = init.board_size;
    this.board = init.board.map((row) => row.slice());
    this.skills = init.pacman_skill_status.slice();
    this.pacman = init.pacman_coord.slice();
    this.ghosts = init.ghosts_coord.map((c) => c.slice());
    this.score = init.score.slice();
    this.beansLeft = init.beannumber;
    this.portalOpen = init.portal_available;
    this.portal = init.portal_coord.slice();
    if (this.level >= 1 && this.level <= LEVELS.length) {
      [this.maxRounds, this.portalAt] = LEVELS[this.level - 1];
    }
    this.survival = this.catches = 0;
    this.levelOver = this.gameOver = false;
    log(`level ${this.level}: ${this.size}x${this.size}, ${this.beansLeft} beans`);
  }

  // playRound replays one round of the rules (as Arena's
  // engine/pacman plays it) on the submitted actions.
  playRound(pac, ghosts) {
    pac = legal(pac);
    ghosts = [0, 1, 2].map((j) => legal(ghosts[j]));
    this.round++;
    const start = this.skills.slice(); // in effect during this round
    for (const k of [SKILL_DOUBLE, SKILL_MAGNET, SKILL_SPEED]) {
      if (this.skills[k] > 0) this.skills[k]--;
    }
    if (start[SKILL_FREEZE] > 0) {
      ghosts = [STAY, STAY, STAY];
      this.skills[SKILL_FREEZE]--;
    }

    // Moves. The catch test compares positions in half cells: the start,
    // the middle of a single step (or the first of two), the end.
    const path = [this.pacman];
    for (let i = 0; i < (start[SKILL_SPEED] > 0 ? 2 : 1); i++) {
      this.eat(start);
      this.pacman = this.move(this.pacman, pac);
      path.push(this.pacman);
    }
    const pacHalf = halves(path);
    const ghostHalf = [];
    for (let j = 0; j < 3; j++) {
      const from = this.ghosts[j];
      this.ghosts[j] = this.move(from, ghosts[j]);
      ghostHalf.push(halves([from, this.ghosts[j]]));
    }
    this.eat(start);

    // Catch: a ghost within half a cell of the Pac-Man at the middle or the
    // end of the round.
    let caught = false;
    for (const k of [1, 2]) {
      for (const g of ghostHalf) {
        if (Math.abs(g[k][0] - pacHalf[k][0]) + Math.abs(g[k][1] - pacHalf[k][1]) <= 1) caught = true;
      }
    }
    let eaten = false;
    if (caught && this.invulnerable === 0 && start[SKILL_SHIELD] > 0) {
      this.skills[SKILL_SHIELD]--;
      this.invulnerable = 1;
      this.score[1] += 10;
      this.survival = 0;
    } else if (caught && this.invulnerable === 0) {
      eaten = true;
      this.invulnerable = 3;
      this.score[0] -= 60;
      this.score[1] += 50;
      this.catches++;
      this.survival = 0;
      this.skills = [0, 0, 0, 0, 0];
      this.pacman = this.respawn();
    } else {
      if (this.invulnerable > 0) this.invulnerable--;
      this.survival++;
      if (this.survival >= 100) {
        this.score[0] += 50;
        this.survival = 0;
      }
    }
    if (this.catches >= 5) {
      this.score[1] += 60;
      this.catches = 0;
    }

    // The level ends through the open portal, with every bean eaten, or
    // when time is up.
    if (this.portalOpen && !eaten && path.some((p) => same(p, this.portal))) {
      this.finish();
      return;
    }
    if (this.portalAt > 0 && this.round >= this.portalAt) this.portalOpen = true;
    if (this.beansLeft <= 0) {
      this.finish();
      return;
    }
    if (this.round >= this.maxRounds) {
      this.score[1] += 75;
      this.endLevel();
    }
  }

  // eat takes what lies under the Pac-Man (the 3x3 square with the magnet).
  eat(active) {
    const r = active[SKILL_MAGNET] > 0 ? 1 : 0;
    const points = active[SKILL_DOUBLE] > 0 ? 2 : 1;
    const [px, py] = this.pacman;
    for (let x = px - r; x <= px + r; x++) {
      for (let y = py - r; y <= py + r; y++) {
        if (!(x >= 1 && x <= this.size - 2 && y >= 1 && y <= this.size - 2)) continue;
        switch (this.board[x][y]) {
          case BEAN:
            this.score[0] += points;
            this.beansLeft--;
            break;
          case BONUS:
            this.score[0] += 2 * points;
            this.beansLeft--;
            break;
          case SPEED:
            this.skills[SKILL_SPEED] = 8;
            break;
          case MAGNET:
            this.skills[SKILL_MAGNET] = 8;
            break;
          case DOUBLE:
            this.skills[SKILL_DOUBLE] = 8;
            break;
          case FREEZE:
            this.skills[SKILL_FREEZE] = 2;
            break;
          case SHIELD_UP:
            this.skills[SKILL_SHIELD]++;
            break;
          default:
            continue;
        }
        this.board[x][y] = EMPTY;
      }
    }
  }

  // finish ends a level left through the portal or emptied of beans.
  finish() {
    if (this.beansLeft <= 0) this.score[0] += 50;
    this.score[0] += Math.trunc((this.maxRounds - this.round) * 0.43);
    this.endLevel();
  }

  endLevel() {
    this.skills = [0, 0, 0, 0, 0];
    this.survival = this.catches = 0;
    this.levelOver = true;
    this.gameOver = this.level >= LEVELS.length;
  }

  // respawn is where an eaten Pac-Man reappears: the EMPTY cell farthest
  // from its nearest ghost, the first in row order among equals.
  respawn() {
    let best = this.pacman;
    let bestDist = 0;
    for (let x = 0; x < this.size; x++) {
      const row = this.board[x];
      for (let y = 0; y < this.size; y++) {
        if (row[y] !== EMPTY) continue;
        let d = Infinity;
        for (const [gx, gy] of this.ghosts) d = Math.min(d, Math.abs(gx - x) + Math.abs(gy - y));
        if (d > bestDist) {
          best = [x, y];
          bestDist = d;
        }
      }
    }
    return best;
  }
}

// halves samples a path of 2 or 3 cells as 3 points in half cells: a single
// step gets its middle.
function halves(path) {
  if (path.length === 3) return path.map(([x, y]) => [2 * x, 2 * y]);
  const [[ax, ay], [bx, by]] = path;
  return [[2 * ax, 2 * ay], [ax + bx, ay + by], [2 * bx, 2 * by]];
}

// send writes one framed message: a 4-byte big-endian length, then the JSON
// {"role":role,"action":action}. Writing to a pipe is synchronous in
// Node.js on Linux: the message has left when the call returns.
function send(role, action) {
  const data = Buffer.from(JSON.stringify({ role, action }), "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length, 0);
  process.stdout.write(Buffer.concat([head, data]));
}

// How long seat 0 waits for the next level's init line after a round that
// its tracking says ended the level (the answer time is 1 s).
const LEVEL_WAIT_MS = 400;

// play is the judger loop. action(game) gives the message's action string.
function play(role, action) {
  const game = new Game(role);
  let buf = "";
  let started = false; // the first init line was read
  let owe = false; // seat 0 owes an answer
  let timer = null; // waiting for the next level's init line

  process.stdout.on("error", () => process.exit(0)); // the match is over

  function answer() {
    owe = false;
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    let a;
    try {
      a = action(game);
    } catch (e) {
      // A bug in the strategy costs one round, not the match: stand still
      // (an illegal action string would lose the match).
      log(e && e.stack ? e.stack : String(e));
      a = role === PACMAN ? "0" : "0 0 0";
    }
    send(role, a);
  }

  function handle(line) {
    if (game.seat < 0) {
      if (line !== "0" && line !== "1") {
        log(`pacman: expected the seat, got ${JSON.stringify(line.slice(0, 60))}`);
        process.exit(0);
      }
      game.seat = Number(line);
      return;
    }
    if (!started) {
      game.startLevel(JSON.parse(line));
      started = true;
      owe = game.seat === 0; // seat 0 opens every round
      return;
    }
    if (line === "player 0 send info") {
      answer(); // seat 1's turn
    } else if (line === "player 1 send info") {
      // seat 0 learns that seat 1 answered; the actions line follows
    } else if (line.startsWith("{") && line.includes('"level"')) {
      game.startLevel(JSON.parse(line));
    } else if (line.startsWith("{") && line.includes('"pacman_action"')) {
      const a = JSON.parse(line);
      game.playRound(a.pacman_action, a.ghosts_action);
      if (game.seat === 0) owe = true;
    } else if (line) {
      log(`pacman: unexpected line ${JSON.stringify(line.slice(0, 60))}`);
    }
  }

  // Seat 0 answers once nothing more is waiting on stdin, or, after a round
  // that ended a level, once the next init line is read (it follows the
  // actions line at once; none comes after the last level).
  function settle() {
    if (!owe) return;
    if (!game.levelOver) {
      answer();
    } else if (!timer) {
      timer = setTimeout(() => {
        timer = null;
        log(`pacman: no init line after the end of level ${game.level}`);
        answer();
      }, LEVEL_WAIT_MS);
    }
  }

  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      handle(line);
    }
    settle();
  });
  process.stdin.on("end", () => {
    if (buf.trim()) handle(buf.trim());
    process.exit(0); // the match is over
  });
}

// playPacman runs a Pac-Man bot: turn(game) returns the action (0..4) for
// each round.
function playPacman(turn) {
  play(PACMAN, (g) => String(legal(turn(g))));
}

// playGhosts runs a ghosts bot: turn(game) returns the three ghosts'
// actions (0..4 each) for each round.
function playGhosts(turn) {
  play(GHOSTS, (g) => {
    const a = turn(g);
    if (!Array.isArray(a) || a.length !== 3) {
      throw new Error(`turn returned ${JSON.stringify(a)}, not three actions`);
    }
    return a.map(legal).join(" ");
  });
}

module.exports = {
  PACMAN, GHOSTS,
  WALL, EMPTY, BEAN, BONUS, SPEED, MAGNET, SHIELD_UP, DOUBLE, FREEZE, PORTAL,
  STAY, UP, LEFT, DOWN, RIGHT, MOVES,
  SKILL_DOUBLE, SKILL_SPEED, SKILL_MAGNET, SKILL_SHIELD, SKILL_FREEZE,
  LEVELS, step, same, log, legal, Game, playPacman, playGhosts,
};
