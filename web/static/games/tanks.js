// Tanks: walls, water, barriers with their health, tanks with health and
// id, bullets with their direction, the closing zone, and what was
// destroyed this turn; above the board a HUD (the turn, the zone's
// radius, each tank's health), below it a key to what is drawn.
import { seatColour, shortId, layout, room, burst, headerStrip, flow, hudWidth } from "./draw.js";

const HUD = 26;
const KEY = 26;

const TYPE = { tank: 0, barrier: 1, block: 2, water: 3 };

function zoneRange(size, r) {
  const lo = Math.floor(size / 2) - r + (size % 2);
  const hi = Math.floor(size / 2) + r - 1;
  return [lo, hi];
}

export const tanks = {
  draw(canvas, frame, { ids }) {
    const st = frame.state.State;
    const events = frame.state.Events || [];
    let w = 0;
    let h = 0;
    for (const c of st.ContentsInfo) {
      w = Math.max(w, c.Coordinates.X + 1);
      h = Math.max(h, c.Coordinates.Y + 1);
    }
    // The HUD: the turn, the zone's radius, each tank's health, on as
    // many lines as the width needs. On a narrow screen (a phone) the key
    // takes two lines and the board no more than the screen's width.
    const narrow = room(canvas).w < 640;
    const turn = frame.turn == null ? 0 : frame.turn;
    const tanksNow = st.ContentsInfo.filter((c) => c.Type === TYPE.tank);
    const say = (text, colour = "#1d2330") => ({ text, font: "bold 13px sans-serif", colour, gap: 12 });
    const items = [say(`Turn ${turn}`), say(`zone radius ${st.ZoneRadius}`, "#b91c1c")];
    const hud = [`Turn ${turn}`, `zone radius ${st.ZoneRadius}`];
    for (const id of ids) {
      const t = tanksNow.find((c) => c.UserId === id);
      items.push(say(`${shortId(id, 16)} ${t ? "♥" + t.HealthCount : "out"}`, seatColour(ids.indexOf(id))));
      hud.push(`${id}: ${t ? "health " + t.HealthCount : "out"}`);
    }
    const head = flow(canvas.getContext("2d"), items, hudWidth(canvas, 640), { lineHeight: HUD - 6 });
    const { g, cell, bw, bh, ox, oy } = layout(canvas, h, w, { header: head.height, top: 4, bottom: (narrow ? 2 : 1) * KEY + 4, minWidth: 640, background: "#f4f1e8" });
    // Y grows upward in the game, downward on the canvas.
    const px = (x) => ox + x * cell;
    const py = (y) => oy + (h - 1 - y) * cell;
    headerStrip(g, canvas.width, head.height);
    head.draw(g);
    canvas.setAttribute("aria-label", "Tanks: " + hud.join(", "));
    g.fillStyle = "#f4f1e8";
    g.fillRect(ox, oy, bw, bh);

    // The zone: outside is shaded, the boundary drawn.
    const [x0, x1] = zoneRange(w, st.ZoneRadius);
    const [y0, y1] = zoneRange(h, st.ZoneRadius);
    g.fillStyle = "rgba(220, 38, 38, 0.12)";
    for (let x = 0; x < w; x++) {
      for (let y = 0; y < h; y++) {
        if (x < x0 || x > x1 || y < y0 || y > y1) g.fillRect(px(x), py(y), cell, cell);
      }
    }
    if (x0 <= x1 && y0 <= y1) {
      g.strokeStyle = "rgba(220, 38, 38, 0.8)";
      g.lineWidth = 2;
      g.strokeRect(px(Math.max(0, x0)), py(Math.min(h - 1, y1)), (Math.min(w - 1, x1) - Math.max(0, x0) + 1) * cell, (Math.min(h - 1, y1) - Math.max(0, y0) + 1) * cell);
    }

    g.textAlign = "center";
    g.textBaseline = "middle";
    const labels = []; // the tanks' names, drawn over everything else
    for (const c of st.ContentsInfo) {
      const x = px(c.Coordinates.X);
      const y = py(c.Coordinates.Y);
      switch (c.Type) {
        case TYPE.block:
          g.fillStyle = "#4b5563";
          g.fillRect(x, y, cell, cell);
          break;
        case TYPE.water:
          g.fillStyle = "#60a5fa";
          g.fillRect(x, y, cell, cell);
          break;
        case TYPE.barrier:
          g.fillStyle = "#a16207";
          g.fillRect(x + 1, y + 1, cell - 2, cell - 2);
          g.fillStyle = "#fff";
          g.font = `bold ${Math.floor(cell * 0.5)}px sans-serif`;
          g.fillText(String(c.HealthCount), x + cell / 2, y + cell / 2);
          break;
        case TYPE.tank: {
          const seat = ids.indexOf(c.UserId);
          g.fillStyle = seatColour(seat);
          g.beginPath();
          g.roundRect(x + 2, y + 2, cell - 4, cell - 4, cell / 5);
          g.fill();
          g.fillStyle = "#fff";
          g.font = `bold ${Math.floor(cell * 0.5)}px sans-serif`;
          g.fillText(String(c.HealthCount), x + cell / 2, y + cell / 2);
          labels.push([shortId(c.UserId, 14), x, y]);
          break;
        }
      }
    }
    // Bullets: a dot with a tail pointing back where it came from.
    const dir = [[0, 1], [0, -1], [-1, 0], [1, 0]];
    for (const b of st.BulletsInfo) {
      const cx = px(b.Coordinates.X) + cell / 2;
      const cy = py(b.Coordinates.Y) + cell / 2;
      const [dx, dy] = dir[b.Direction] || [0, 0];
      const seat = ids.indexOf(b.OwnerId);
      g.strokeStyle = seatColour(seat);
      g.lineWidth = Math.max(2, cell / 8);
      g.beginPath();
      g.moveTo(cx - dx * cell * 0.45, cy + dy * cell * 0.45);
      g.lineTo(cx, cy);
      g.stroke();
      g.fillStyle = "#111";
      g.beginPath();
      g.arc(cx, cy, Math.max(2, cell / 7), 0, 2 * Math.PI);
      g.fill();
    }
    // What was destroyed this turn: a burst where it stood.
    for (const e of events) {
      if (e.Kind !== "destroyed") continue;
      const cx = px(e.Coordinates.X) + cell / 2;
      const cy = py(e.Coordinates.Y) + cell / 2;
      g.strokeStyle = "#f97316";
      g.lineWidth = 3;
      burst(g, cx, cy, cell * 0.15, cell * 0.5);
    }
    // Each tank's name above it (below it on the top row), on a light
    // box, kept on the board.
    const size = Math.max(11, Math.floor(cell * 0.32));
    g.font = `${size}px sans-serif`;
    g.textAlign = "center";
    g.textBaseline = "middle";
    for (const [label, x, y] of labels) {
      const half = g.measureText(label).width / 2 + 3;
      const lx = Math.max(ox + half, Math.min(ox + bw - half, x + cell / 2));
      const ly = Math.max(oy + size, Math.min(oy + bh - size, y - cell * 0.22 < oy + size ? y + cell * 1.2 : y - cell * 0.22));
      g.fillStyle = "rgba(255, 255, 255, 0.8)";
      g.fillRect(lx - half, ly - size * 0.7, 2 * half, size * 1.4);
      g.fillStyle = "#111";
      g.fillText(label, lx, ly);
    }
    drawKey(g, canvas.width, oy + bh + 4);
    // Where a bot's annotations go: its coordinates, a cell's centre.
    return { at: (x, y) => [px(x) + cell / 2, py(y) + cell / 2], cell };
  },
};

// drawKey writes, in a strip at y, what each thing on the board is.
function drawKey(g, width, y) {
  const s = 14;
  let cy = y + KEY / 2;
  let x = 8;
  g.textAlign = "left";
  g.textBaseline = "middle";
  g.font = "12px sans-serif";
  const item = (paint, text) => {
    g.font = "12px sans-serif";
    if (x > 8 && x + s + 4 + g.measureText(text).width > width) {
      x = 8; // the next line
      cy += KEY;
    }
    paint(x, cy - s / 2);
    g.fillStyle = "#374151";
    g.fillText(text, x + s + 4, cy);
    x += s + 4 + g.measureText(text).width + 12;
  };
  const square = (colour, label) => (x0, y0) => {
    g.fillStyle = colour;
    g.fillRect(x0, y0, s, s);
    if (label) {
      g.fillStyle = "#fff";
      g.font = "bold 9px sans-serif";
      g.textAlign = "center";
      g.fillText(label, x0 + s / 2, y0 + s / 2 + 0.5);
      g.textAlign = "left";
      g.font = "12px sans-serif";
    }
  };
  item(square("#4b5563"), "wall");
  item(square("#60a5fa"), "water");
  item(square("#a16207", "3"), "barrier (hits left)");
  item(square(seatColour(0), "2"), "tank (health)");
  item((x0, y0) => {
    g.fillStyle = "rgba(220, 38, 38, 0.25)";
    g.fillRect(x0, y0, s, s);
  }, "outside the zone");
  item((x0, y0) => {
    g.fillStyle = "#111";
    g.beginPath();
    g.arc(x0 + s / 2, y0 + s / 2, 3, 0, 2 * Math.PI);
    g.fill();
  }, "bullet");
  return x <= width;
}
