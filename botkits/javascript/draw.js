// Show what the bot is thinking: shapes the viewer draws over the board
// for the turn, in the game's coordinates (Tanks: x, y; Snake and
// Pac-Man: row, column). Add shapes while deciding, then call
// draw.flush() once before answering: it writes one line to stderr,
//
//   #arena {"draw":[{"circle":[3,4],"text":"me"},{"line":[[3,4],[7,4]],"color":"#e33"}]}
//
// which the replay keeps with the turn's stderr. No color: the bot's
// own; a text is at most 40 characters.
"use strict";

let items = [];

function add(item, color, text) {
  if (color) item.color = color;
  if (text !== undefined && text !== null && text !== "") item.text = String(text);
  items.push(item);
}

module.exports = {
  // circle rings the cell x, y.
  circle: (x, y, color, text) => add({ circle: [x, y] }, color, text),
  // line joins the centres of cells a and b, each [x, y].
  line: (a, b, color, text) => add({ line: [a, b] }, color, text),
  // cell shades the cell x, y.
  cell: (x, y, color, text) => add({ cell: [x, y] }, color, text),
  // text writes words at the cell x, y.
  text: (x, y, words, color) => add({ at: [x, y] }, color, words),
  // flush writes this turn's shapes (none: nothing) and starts the next
  // turn's.
  flush() {
    if (items.length) process.stderr.write("#arena " + JSON.stringify({ draw: items }) + "\n");
    items = [];
  },
};
