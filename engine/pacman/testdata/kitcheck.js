// Replays the engine's transcript through the JavaScript kit's rules.
//
// Usage: node kitcheck.js PATH/TO/botkits/javascript/pacman.js TRANSCRIPT
//
// TestKitRules (engine/pacman/kits_test.go) writes the transcript and runs
// this script, as it runs kitcheck.py for the Python kit; the comments there
// say what is compared. Each seat's stdin, exactly as the platform delivered
// it, is fed to a pacman.Game the way the kit's input loop feeds it, and
// after every actions line the Game must hold the engine's state after that
// round. On the first round that differs, the script prints both values of
// each field that differs and exits with 1; on success it prints how many
// rounds it compared.
"use strict";

const fs = require("fs");
const path = require("path");

function differences(g, want, board) {
  const diff = [];
  const field = (name, kit, engine) => {
    if (JSON.stringify(kit) !== JSON.stringify(engine)) diff.push(`${name}: kit ${JSON.stringify(kit)}, engine ${JSON.stringify(engine)}`);
  };
  field("level", g.level, want.level);
  field("round", g.round, want.round);
  field("pacman", g.pacman, want.pacman);
  field("ghosts", g.ghosts, want.ghosts);
  field("score", g.score, want.score);
  field("skills", g.skills, want.skills);
  field("invulnerable", g.invulnerable, want.invulnerable);
  field("survival", g.survival, want.survival);
  field("catches", g.catches, want.catches);
  field("beans left", g.beansLeft, want.beans_left);
  field("portal open", g.portalOpen, want.portal_open);
  field("level over", g.levelOver, want.level_over);
  field("game over", g.gameOver, want.game_over);
  if (g.board.length !== board.length) {
    diff.push(`board: kit ${g.board.length} rows, engine ${board.length}`);
    return diff;
  }
  const cells = [];
  for (let x = 0; x < board.length; x++) {
    for (let y = 0; y < board[x].length; y++) {
      if (g.at([x, y]) !== board[x][y]) cells.push([x, y]);
    }
  }
  for (const [x, y] of cells.slice(0, 5)) field(`board[${x}][${y}]`, g.at([x, y]), board[x][y]);
  if (cells.length > 5) diff.push(`board: ${cells.length - 5} more cells differ`);
  return diff;
}

// follow feeds seat's stdin to a Game and compares it with the engine
// after each round; it returns how many rounds were compared, or throws at
// the first one that differs.
function follow(kit, match, seat) {
  const rounds = match.rounds;
  const g = new kit.Game(seat === match.pacman_seat ? kit.PACMAN : kit.GHOSTS);
  let board = null; // the engine's board: the level's, then each round's changes
  let played = 0;
  let text = match.stdin[seat];
  if (text.endsWith("\n")) text = text.slice(0, -1);
  const lines = text.split("\n");
  lines.forEach((raw, n) => {
    const i = n + 1;
    const line = raw.trim();
    if (g.seat < 0 && (line === "0" || line === "1")) {
      g.seat = Number(line);
    } else if (line === "player 0 send info" || line === "player 1 send info") {
      // nothing to follow
    } else if (line.startsWith("{") && line.includes('"level"')) {
      const init = JSON.parse(line);
      g.startLevel(init);
      board = init.board.map((row) => row.slice());
    } else if (line.startsWith("{") && line.includes('"pacman_action"')) {
      if (played === rounds.length) throw new Error(`line ${i}: more actions lines than the ${played} rounds the engine played`);
      const want = rounds[played];
      played++;
      const a = JSON.parse(line);
      g.playRound(a.pacman_action, a.ghosts_action);
      for (const [x, y, v] of want.board) board[x][y] = v;
      const diff = differences(g, want, board);
      if (diff.length) {
        throw new Error(`line ${i} ${line}: the kit differs from the engine after level ${want.level} round ${want.round} (turn ${played}):\n\t${diff.join("\n\t")}`);
      }
    } else {
      throw new Error(`line ${i}: unexpected line ${JSON.stringify(line.slice(0, 60))}`);
    }
  });
  if (played !== rounds.length) throw new Error(`${played} actions lines, but the engine played ${rounds.length} rounds`);
  return played;
}

function main() {
  if (process.argv.length !== 4) {
    process.stderr.write("usage: node kitcheck.js PATH/TO/pacman.js TRANSCRIPT\n");
    process.exit(2);
  }
  const kit = require(path.resolve(process.argv[2]));
  const transcript = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
  // startLevel logs each level on stderr, as a bot's debug output does.
  process.stderr.write = () => true;
  let compared = 0;
  let failed = false;
  for (const match of transcript.matches) {
    for (const seat of [0, 1]) {
      try {
        compared += follow(kit, match, seat);
      } catch (e) {
        console.log(`${match.name} (seed ${match.seed}, the Pac-Man on seat ${match.pacman_seat}), seat ${seat}'s stdin, ${e.message}`);
        failed = true;
        break; // the other seat reads the same rounds
      }
    }
  }
  if (failed) process.exit(1);
  console.log(`compared ${compared} rounds`);
}

main();
