// Snake: the board (walls, ground, the closed rings and the next one to
// close), apples and shields, both snakes (head with eyes, shield and its
// rounds left), a snake that died this round greyed where it stood, and
// this round's events: deaths with their reason, what was eaten, what
// reappeared, the ring that closed. A header strip gives the round, the
// shrink countdown and each snake's score and status.
import { seatColour, num, shortId, layout, ticks, pill, headerStrip, shieldPath, cross, burst, flow, hudWidth } from "./draw.js";

const MARGIN = 16; // room for the coordinate ticks, left and top
const MIN_WIDTH = 540;

const WALL = "#4b5563";
const RING = "#7f1d1d"; // a closed ring
const GROUND = "#f4f1e8";
const GROUND_ALT = "#eeeadd";
const APPLE = "#dc2626";
const SHIELD = "#ca8a04";
const DEAD = "#9ca3af";


const cellOf = (a) => (Array.isArray(a) && a.length >= 2 && Number.isFinite(a[0]) && Number.isFinite(a[1]) ? [a[0], a[1]] : null);
const cells = (a) => (Array.isArray(a) ? a.map(cellOf).filter(Boolean) : []);

// shade mixes a #rrggbb colour with black (f < 0) or white (f > 0).
function shade(hex, f) {
  const n = parseInt(hex.slice(1), 16);
  const mix = (c) => Math.round(f < 0 ? c * (1 + f) : c + (255 - c) * f);
  const r = mix(n >> 16);
  const g = mix((n >> 8) & 255);
  const b = mix(n & 255);
  return `rgb(${r},${g},${b})`;
}

// headerItems are the header's items (see flow): the round and the
// shrink countdown, then each snake's score and status.
function headerItems(st, snakes, events, ids, match, { round, closed, rings }) {
  const rts = num(st.round_to_shrink, -1);
  let line1 = `Round ${round}`;
  if (st.over) {
    const res = match && match.result;
    const winners = res && Array.isArray(res.winners) ? res.winners : null;
    line1 += " · game over";
    if (winners) line1 += winners.length ? ` · winner ${winners.map((w) => shortId(w)).join(", ")}` : " · draw";
  }
  let shrinkText = `rings closed ${closed}/${rings}`;
  if (closed < rings && rts >= 0 && !st.over) shrinkText += ` · ring ${closed} closes in ${rts} round${rts === 1 ? "" : "s"}`;
  const shrinkEv = events.find((e) => e && e.type === "shrink");
  if (shrinkEv) shrinkText += ` · ring ${num(shrinkEv.ring, closed - 1)} just closed`;
  const items = [
    { text: line1, font: "bold 13px sans-serif", colour: "#111" },
    { text: shrinkText, font: "12px sans-serif", colour: shrinkEv || (rts >= 0 && rts <= 5) ? "#b91c1c" : "#374151" },
  ];
  snakes.forEach((s, i) => {
    if (!s) return;
    const seat = Number.isInteger(s.seat) ? s.seat : i;
    const colour = seatColour(seat);
    const badge = {
      width: 16,
      draw(g, x, y) {
        g.fillStyle = s.alive === false ? DEAD : colour;
        g.beginPath();
        g.arc(x + 6, y, 6, 0, 2 * Math.PI);
        g.fill();
        g.fillStyle = "#fff";
        g.font = "bold 9px sans-serif";
        g.textAlign = "center";
        g.textBaseline = "middle";
        g.fillText(String(seat + 1), x + 6, y + 0.5);
      },
    };
    const name = shortId(ids[seat] !== undefined ? ids[seat] : `snake ${seat + 1}`);
    const len = Array.isArray(s.body) ? s.body.length : 0;
    let status = `score ${num(s.score)}`;
    if (s.alive !== false && len < num(s.score)) status += ` (len ${len})`;
    if (s.alive === false) status += ` · ✝ ${s.death_reason || "dead"}${s.death_round ? " @" + s.death_round : ""}`;
    else if (num(s.shield) > 0) status += ` · shield ${num(s.shield)}`;
    items.push({ glyph: badge, text: name, font: "bold 12px sans-serif", colour: "#111", gap: 6, br: true });
    items.push({ text: status, font: "12px sans-serif", colour: s.alive === false ? "#b91c1c" : "#374151" });
  });
  return items;
}

export const snake = {
  draw(canvas, frame, { ids = [], frames = [], index = 0, match = null } = {}) {
    const st = (frame && frame.state) || {};
    const board = Array.isArray(st.board) ? st.board.map((r) => String(r)) : [];
    // The board's own size first; the declared one only without a board.
    const size = (v) => Math.max(1, Math.min(200, Math.floor(v) || 1));
    const rows = size(board.length || num(st.rows, 1));
    const cols = size(board.length ? Math.max(...board.map((r) => r.length)) : num(st.cols, 1));
    const snakes = Array.isArray(st.snakes) ? st.snakes : [];
    const events = Array.isArray(st.events) ? st.events : [];
    const round = num(st.round, num(frame && frame.turn));
    const closed = num(st.rings_closed);
    const rings = num(st.rings, Math.ceil(Math.min(rows, cols) / 2));

    const head = flow(canvas.getContext("2d"), headerItems(st, snakes, events, ids, match, { round, closed, rings }), hudWidth(canvas, MIN_WIDTH), { lineHeight: 18 });
    const { g, cell, ox, oy } = layout(canvas, rows, cols, { header: head.height, left: MARGIN, right: 8, top: MARGIN, bottom: 6, minWidth: MIN_WIDTH });
    const px = (y) => ox + y * cell; // y is the column
    const py = (x) => oy + x * cell; // x is the row, 0 at the top
    const cx = (c) => px(c[1]) + cell / 2;
    const cy = (c) => py(c[0]) + cell / 2;
    const ringOf = (x, y) => Math.min(x, y, rows - 1 - x, cols - 1 - y);

    // Coordinate ticks: rows on the left, columns on top.
    const every = cell >= 20 ? 1 : cell >= 12 ? 2 : 5;
    ticks(g, { rows, cols, cell, every, x: ox - 3, rowAt: (x) => py(x) + cell / 2, y: oy - 2, colAt: (y) => px(y) + cell / 2 });

    // The board: ground, walls, and the closed rings.
    for (let x = 0; x < rows; x++) {
      const line = board[x] || "";
      for (let y = 0; y < cols; y++) {
        const ch = line[y] || ".";
        const inRing = ringOf(x, y) < closed;
        if (ch === "#" || inRing) {
          g.fillStyle = inRing ? RING : WALL;
          g.fillRect(px(y), py(x), cell, cell);
          if (inRing && cell >= 10) {
            // Hatching tells a closed ring from a permanent wall.
            g.strokeStyle = "rgba(255,255,255,0.18)";
            g.lineWidth = 1;
            g.beginPath();
            g.moveTo(px(y), py(x) + cell);
            g.lineTo(px(y) + cell, py(x));
            g.stroke();
          }
        } else {
          g.fillStyle = (x + y) % 2 ? GROUND_ALT : GROUND;
          g.fillRect(px(y), py(x), cell, cell);
        }
      }
    }

    // The ring that closes next, outlined; red when it closes next round.
    const rts = num(st.round_to_shrink, -1);
    if (closed < rings && !st.over) {
      const lo = closed;
      const x0 = lo;
      const y0 = lo;
      const x1 = rows - 1 - lo;
      const y1 = cols - 1 - lo;
      if (x0 <= x1 && y0 <= y1) {
        const soon = rts >= 0 && rts <= 5;
        g.strokeStyle = soon ? "rgba(220,38,38,0.9)" : "rgba(127,29,29,0.35)";
        g.lineWidth = soon ? 2.5 : 1.5;
        g.setLineDash([cell / 3, cell / 4]);
        g.strokeRect(px(y0) + 1, py(x0) + 1, (y1 - y0 + 1) * cell - 2, (x1 - x0 + 1) * cell - 2);
        const ix0 = x0 + 1;
        const iy0 = y0 + 1;
        const ix1 = x1 - 1;
        const iy1 = y1 - 1;
        if (ix0 <= ix1 && iy0 <= iy1) g.strokeRect(px(iy0) - 1, py(ix0) - 1, (iy1 - iy0 + 1) * cell + 2, (ix1 - ix0 + 1) * cell + 2);
        g.setLineDash([]);
      }
    }
    // The ring that closed at the end of this round, flashed.
    for (const e of events) {
      if (!e || e.type !== "shrink") continue;
      const ring = num(e.ring, closed - 1);
      g.strokeStyle = "rgba(249,115,22,0.95)";
      g.lineWidth = Math.max(2, cell / 6);
      const x0 = ring;
      const y0 = ring;
      const x1 = rows - 1 - ring;
      const y1 = cols - 1 - ring;
      if (x0 <= x1 && y0 <= y1) g.strokeRect(px(y0) + g.lineWidth / 2, py(x0) + g.lineWidth / 2, (y1 - y0 + 1) * cell - g.lineWidth, (x1 - x0 + 1) * cell - g.lineWidth);
    }

    // Items: from "items", or from the board when the list is missing.
    let items = Array.isArray(st.items) ? st.items.filter((it) => it && cellOf(it.at)) : null;
    if (!items) {
      items = [];
      board.forEach((line, x) => {
        for (let y = 0; y < line.length; y++) {
          if (line[y] === "o") items.push({ type: "apple", at: [x, y] });
          if (line[y] === "O") items.push({ type: "shield", at: [x, y] });
        }
      });
    }
    for (const it of items) {
      const c = cellOf(it.at);
      const x = cx(c);
      const y = cy(c);
      if (it.type === "shield") {
        shieldPath(g, x, y, cell * 0.36);
        g.fillStyle = SHIELD;
        g.fill();
        g.strokeStyle = "#713f12";
        g.lineWidth = Math.max(1, cell / 16);
        g.stroke();
      } else {
        g.fillStyle = APPLE;
        g.beginPath();
        g.arc(x, y + cell * 0.04, cell * 0.3, 0, 2 * Math.PI);
        g.fill();
        g.fillStyle = "#15803d";
        g.beginPath();
        g.ellipse(x + cell * 0.1, y - cell * 0.28, cell * 0.12, cell * 0.06, -0.5, 0, 2 * Math.PI);
        g.fill();
      }
    }

    // A snake's body: a thick line through its cells, the head on top.
    const drawBody = (body, colour, head, faded) => {
      if (!body.length) return;
      g.lineCap = "round";
      g.lineJoin = "round";
      g.strokeStyle = faded ? DEAD : shade(colour, 0.25);
      g.lineWidth = cell * 0.62;
      g.beginPath();
      g.moveTo(cx(body[0]), cy(body[0]));
      for (let i = 1; i < body.length; i++) {
        const a = body[i - 1];
        const b = body[i];
        // Cells that are not neighbours (a gap in a partial frame) are not joined.
        if (Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) === 1) g.lineTo(cx(b), cy(b));
        else g.moveTo(cx(b), cy(b));
      }
      g.stroke();
      if (body.length === 1) {
        g.fillStyle = g.strokeStyle;
        g.beginPath();
        g.arc(cx(body[0]), cy(body[0]), cell * 0.31, 0, 2 * Math.PI);
        g.fill();
      }
      // Segment marks so the length can be counted.
      if (cell >= 14) {
        g.fillStyle = faded ? "rgba(255,255,255,0.35)" : "rgba(255,255,255,0.3)";
        for (let i = 1; i < body.length; i++) {
          g.beginPath();
          g.arc(cx(body[i]), cy(body[i]), cell * 0.08, 0, 2 * Math.PI);
          g.fill();
        }
      }
      if (!head) return;
      const h = body[0];
      const hx = cx(h);
      const hy = cy(h);
      g.fillStyle = faded ? "#6b7280" : colour;
      g.beginPath();
      g.arc(hx, hy, cell * 0.42, 0, 2 * Math.PI);
      g.fill();
      g.strokeStyle = faded ? "#374151" : shade(colour, -0.4);
      g.lineWidth = Math.max(1, cell / 14);
      g.stroke();
      // Eyes look the way it moves: away from the second cell.
      let dx = 0;
      let dy = 1;
      if (body.length > 1) {
        dx = h[0] - body[1][0];
        dy = h[1] - body[1][1];
        const n = Math.hypot(dx, dy) || 1;
        dx /= n;
        dy /= n;
      }
      const fx = dy; // screen x follows the column
      const fy = dx; // screen y follows the row
      for (const side of [-1, 1]) {
        const ex = hx + fx * cell * 0.14 - fy * side * cell * 0.17;
        const ey = hy + fy * cell * 0.14 + fx * side * cell * 0.17;
        g.fillStyle = "#fff";
        g.beginPath();
        g.arc(ex, ey, cell * 0.11, 0, 2 * Math.PI);
        g.fill();
        g.fillStyle = "#111";
        g.beginPath();
        g.arc(ex + fx * cell * 0.04, ey + fy * cell * 0.04, cell * 0.055, 0, 2 * Math.PI);
        g.fill();
      }
    };

    const prevState = index > 0 && frames[index - 1] && frames[index - 1].state;
    const prevSnakes = prevState && Array.isArray(prevState.snakes) ? prevState.snakes : [];
    const diedNow = new Set(events.filter((e) => e && e.type === "died").map((e) => e.seat));

    snakes.forEach((s, i) => {
      if (!s) return;
      const seat = Number.isInteger(s.seat) ? s.seat : i;
      let body = cells(s.body);
      let faded = s.alive === false;
      // Died this round: the frame has removed it; show where it stood.
      if (!body.length && faded && (diedNow.has(seat) || (num(s.death_round) === round && round > 0))) {
        const p = prevSnakes.find((q) => q && q.seat === seat) || prevSnakes[seat];
        body = p ? cells(p.body) : [];
      }
      if (!body.length) return;
      g.globalAlpha = faded ? 0.75 : 1;
      drawBody(body, seatColour(seat), true, faded);
      g.globalAlpha = 1;
      const h = body[0];
      const shield = num(s.shield, Math.max(0, num(s.status)));
      if (!faded && shield > 0) {
        g.strokeStyle = SHIELD;
        g.lineWidth = Math.max(2, cell / 8);
        g.beginPath();
        g.arc(cx(h), cy(h), cell * 0.55, 0, 2 * Math.PI);
        g.stroke();
        const bx = cx(h) + cell * 0.5;
        const by = cy(h) - cell * 0.5;
        const r = Math.max(7, cell * 0.3);
        shieldPath(g, bx, by, r);
        g.fillStyle = SHIELD;
        g.fill();
        g.strokeStyle = "#713f12";
        g.lineWidth = 1;
        g.stroke();
        g.fillStyle = "#fff";
        g.font = `bold ${Math.max(8, Math.floor(r * 1.05))}px sans-serif`;
        g.textAlign = "center";
        g.textBaseline = "middle";
        g.fillText(String(shield), bx, by + 0.5);
      }
    });

    // This round's events at their cells.
    const small = Math.max(11, Math.min(13, Math.floor(cell * 0.45)));
    for (const e of events) {
      if (!e) continue;
      const at = cellOf(e.at);
      if (e.type === "spawn" && at) {
        g.strokeStyle = "rgba(22,163,74,0.8)";
        g.lineWidth = 1.5;
        g.setLineDash([2, 2]);
        g.beginPath();
        g.arc(cx(at), cy(at), cell * 0.48, 0, 2 * Math.PI);
        g.stroke();
        g.setLineDash([]);
      } else if (e.type === "ate" && at) {
        g.strokeStyle = e.item === "shield" ? SHIELD : "#16a34a";
        g.lineWidth = 2;
        burst(g, cx(at), cy(at), cell * 0.5, cell * 0.7);
        pill(g, e.item === "shield" ? "+1 shield" : "+1", cx(at), py(at[0]) - cell * 0.15, { size: small, bg: "rgba(22,101,52,0.85)", pad: [8, 5] });
      }
    }
    for (const e of events) {
      if (!e || e.type !== "died") continue;
      const at = cellOf(e.at);
      if (!at) continue;
      const to = cellOf(e.to);
      const x = cx(at);
      const y = cy(at);
      if (to && (to[0] !== at[0] || to[1] !== at[1])) {
        // The move it asked for, clipped to the canvas.
        const tx = Math.max(2, Math.min(canvas.width - 2, cx(to)));
        const ty = Math.max(oy - MARGIN + 2, Math.min(canvas.height - 2, cy(to)));
        g.strokeStyle = "#111";
        g.lineWidth = 2;
        g.setLineDash([3, 3]);
        g.beginPath();
        g.moveTo(x, y);
        g.lineTo(tx, ty);
        g.stroke();
        g.setLineDash([]);
        g.beginPath();
        g.arc(tx, ty, Math.max(2, cell * 0.12), 0, 2 * Math.PI);
        g.fillStyle = "#111";
        g.fill();
      }
      g.strokeStyle = "#111";
      g.lineWidth = Math.max(3, cell / 7);
      const r = cell * 0.32;
      cross(g, x, y, r);
      const seat = num(e.seat, -1);
      const label = `✝ ${seat >= 0 ? seat + 1 : "?"}: ${e.reason || "died"}`;
      // The label goes on the side away from the cell it asked for.
      const below = to ? to[0] <= at[0] : at[0] < rows - 1;
      const ly = below ? py(at[0]) + cell * 1.3 : py(at[0]) - cell * 0.3;
      pill(g, label, Math.max(60, Math.min(canvas.width - 60, x)), ly, { size: small, bg: seatColour(seat), pad: [8, 5] });
    }

    // The header: round and shrink countdown, then each snake.
    headerStrip(g, canvas.width, head.height);
    head.draw(g);
    // Where a bot's annotations go: [row, column], a cell's centre.
    return { at: (x, y) => [px(y) + cell / 2, py(x) + cell / 2], cell };
  },
};
