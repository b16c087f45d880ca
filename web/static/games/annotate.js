// Bot annotations: what a bot was thinking, drawn over the board. A bot
// writes lines to stderr such as
//   #arena {"draw":[{"circle":[3,4],"color":"#e33","text":"target"},{"line":[[1,1],[3,4]]}]}
// in its game's coordinates (docs/bots.md, "Annotations"). Items:
// circle [x,y] (r: its radius in cells), line [[x1,y1],[x2,y2]], cell
// [x,y] (a square shaded), text with at [x,y]; each may have a color
// and a text. A line that does not read is left as text in the turn's
// panel and drawn as nothing.

const PREFIX = "#arena ";
// ITEMS bounds what one bot draws on one frame.
const ITEMS = 200;
const COLOUR = /^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20})$/;

const point = (p) => Array.isArray(p) && p.length === 2 && Number.isFinite(p[0]) && Number.isFinite(p[1]);

// parse reads a bot's stderr of one turn: the items it drew, and how many
// of its #arena lines did not read.
export function parse(stderr) {
  const items = [];
  let bad = 0;
  if (!stderr || !stderr.includes(PREFIX.trim())) return { items, bad };
  for (const line of stderr.split("\n")) {
    if (!line.startsWith(PREFIX)) continue;
    let msg;
    try {
      msg = JSON.parse(line.slice(PREFIX.length));
    } catch {
      bad++;
      continue;
    }
    if (!msg || !Array.isArray(msg.draw)) {
      bad++;
      continue;
    }
    for (const it of msg.draw) {
      if (items.length >= ITEMS) break;
      if (!it || typeof it !== "object") continue;
      const colour = typeof it.color === "string" && COLOUR.test(it.color) ? it.color : null;
      const text = typeof it.text === "string" ? it.text.slice(0, 40) : "";
      if (point(it.circle)) items.push({ kind: "circle", at: it.circle, r: Number.isFinite(it.r) ? Math.min(Math.max(it.r, 0.05), 20) : 0.35, colour, text });
      else if (Array.isArray(it.line) && it.line.length === 2 && point(it.line[0]) && point(it.line[1])) items.push({ kind: "line", from: it.line[0], to: it.line[1], colour, text });
      else if (point(it.cell)) items.push({ kind: "cell", at: it.cell, colour, text });
      else if (text && point(it.at)) items.push({ kind: "text", at: it.at, colour, text });
    }
  }
  return { items, bad };
}

// draw paints items over the board: at maps a bot's coordinates to the
// canvas, cell is a cell's size, colour the bot's (for items without one).
export function draw(g, items, { at, cell }, colour) {
  g.save();
  g.lineWidth = Math.max(2, cell / 10);
  g.font = `bold ${Math.max(10, Math.round(cell * 0.38))}px sans-serif`;
  g.textAlign = "center";
  g.textBaseline = "bottom";
  for (const it of items) {
    const c = it.colour || colour;
    g.strokeStyle = c;
    g.fillStyle = c;
    let label = null;
    switch (it.kind) {
      case "circle": {
        const [x, y] = at(it.at[0], it.at[1]);
        g.beginPath();
        g.arc(x, y, it.r * cell, 0, 2 * Math.PI);
        g.stroke();
        label = [x, y - it.r * cell];
        break;
      }
      case "line": {
        const [x1, y1] = at(it.from[0], it.from[1]);
        const [x2, y2] = at(it.to[0], it.to[1]);
        g.setLineDash([cell / 4, cell / 6]);
        g.beginPath();
        g.moveTo(x1, y1);
        g.lineTo(x2, y2);
        g.stroke();
        g.setLineDash([]);
        label = [(x1 + x2) / 2, (y1 + y2) / 2];
        break;
      }
      case "cell": {
        const [x, y] = at(it.at[0], it.at[1]);
        g.globalAlpha = 0.35;
        g.fillRect(x - cell / 2, y - cell / 2, cell, cell);
        g.globalAlpha = 1;
        label = [x, y - cell / 2];
        break;
      }
      case "text":
        label = at(it.at[0], it.at[1]);
        break;
    }
    if (label && it.text) {
      g.lineWidth = 3;
      g.strokeStyle = "rgba(255, 255, 255, 0.85)";
      g.strokeText(it.text, label[0], label[1] - 2);
      g.fillText(it.text, label[0], label[1] - 2);
      g.lineWidth = Math.max(2, cell / 10);
    }
  }
  g.restore();
}
