// Tanks: walls, water, barriers with their health, tanks with health and
// id, bullets with their direction, the closing zone, and what was
// destroyed this turn.
import { seatColour, shortId, layout, burst } from "./draw.js";

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
    const { g, cell } = layout(canvas, h, w, { background: "#f4f1e8" });
    // Y grows upward in the game, downward on the canvas.
    const px = (x) => x * cell;
    const py = (y) => (h - 1 - y) * cell;

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
          g.fillStyle = "#111";
          g.font = `${Math.max(9, Math.floor(cell * 0.32))}px sans-serif`;
          g.fillText(shortId(c.UserId, 14), x + cell / 2, y - cell * 0.22);
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
  },
};
