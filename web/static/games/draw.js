// Drawing helpers shared by the renderers.

// num is v when it is a finite number, else d.
export const num = (v, d = 0) => (typeof v === "number" && Number.isFinite(v) ? v : d);

// shortId is a bot id without its registry path, at most 18 characters.
export function shortId(id) {
  const s = String(id == null ? "" : id).split("/").pop();
  return s.length > 18 ? s.slice(0, 17) + "…" : s;
}

// shieldPath traces a small heraldic shield centred on (cx, cy).
export function shieldPath(g, cx, cy, r) {
  g.beginPath();
  g.moveTo(cx, cy - r);
  g.lineTo(cx + r * 0.85, cy - r * 0.6);
  g.quadraticCurveTo(cx + r * 0.85, cy + r * 0.5, cx, cy + r);
  g.quadraticCurveTo(cx - r * 0.85, cy + r * 0.5, cx - r * 0.85, cy - r * 0.6);
  g.closePath();
}

// headerStrip paints the strip of text above a board, height pixels high,
// and leaves the text drawing state set for it.
export function headerStrip(g, width, height) {
  g.fillStyle = "#f1efe6";
  g.fillRect(0, 0, width, height);
  g.strokeStyle = "#d6d3c7";
  g.lineWidth = 1;
  g.beginPath();
  g.moveTo(0, height - 0.5);
  g.lineTo(width, height - 0.5);
  g.stroke();
  g.textAlign = "left";
  g.textBaseline = "middle";
}

// cross strokes an X of half-size r centred on (x, y) with the current
// stroke style.
export function cross(g, x, y, r) {
  g.beginPath();
  g.moveTo(x - r, y - r);
  g.lineTo(x + r, y + r);
  g.moveTo(x + r, y - r);
  g.lineTo(x - r, y + r);
  g.stroke();
}
