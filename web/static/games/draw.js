// Drawing helpers shared by the page and the renderers: the seat colours,
// the canvas layout, coordinate ticks, labels and a few shapes.

// One colour per seat; ids that hold no seat get the last one.
const colours = ["#e11d48", "#2563eb", "#16a34a", "#d97706", "#7c3aed", "#0891b2"];

export const seatColour = (seat) => colours[(seat < 0 ? colours.length - 1 : seat) % colours.length];

// num is v when it is a finite number, else d.
export const num = (v, d = 0) => (typeof v === "number" && Number.isFinite(v) ? v : d);

// shortId is a bot id without its registry path, at most max characters.
export function shortId(id, max = 18) {
  const s = String(id == null ? "" : id).split("/").pop();
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

// room is the space a board may take: the width of the canvas's stage
// (less the legend beside it on a wide stage) and the window's height
// less the page around the board; the whole screen in full-screen view.
export function room(canvas) {
  const stage = canvas && canvas.parentElement;
  const full = typeof document !== "undefined" && document.fullscreenElement && document.fullscreenElement.contains(canvas);
  const vh = typeof window !== "undefined" ? window.innerHeight : 800;
  let w = stage && stage.clientWidth ? stage.clientWidth : 720;
  if (!full && w >= 1100) w -= 230; // the legend beside the board (else it goes below)
  const h = full ? vh - 16 : Math.max(360, vh - 200);
  return { w: Math.max(200, w - 4), h };
}

// layout sizes the canvas for a board of rows × cols square cells, as
// large as the room it has (see room; cells of 5 to 48 pixels), with a
// header strip above it and room around it: left, right, top and bottom
// of the board, the canvas at least minWidth wide (or the room's width,
// if less) with the board centred. It paints the canvas with background
// and returns the 2D context, the cell size, the board's size in pixels
// and its top-left corner (ox, oy).
export function layout(canvas, rows, cols, { header = 0, left = 0, right = 0, top = 0, bottom = 0, minWidth = 0, background = "#fbfbf8" } = {}) {
  const r = room(canvas);
  // Never wider than the room: a canvas scaled down shrinks its text.
  minWidth = Math.min(minWidth, r.w);
  const fitIn = (w, h) => Math.max(5, Math.min(48, Math.floor(Math.min((w - left - right) / cols, (h - header - top - bottom) / rows))));
  const size = (cell) => [Math.max(minWidth, cols * cell + left + right), header + top + rows * cell + bottom];
  // A board keeps its cell size while the room does (not one frame's
  // larger header, the next frame's smaller one). A new size of the
  // canvas costs a lot: its pixels are allocated again and the page laid
  // out again (on a slow computer, a task of 50 ms and more). So a new
  // board (a new level) that would make the canvas larger takes cells a
  // little smaller where that keeps it in the canvas as it is, and a
  // canvas keeps its size while what it shows fills most of it.
  const key = `${rows}x${cols} in ${r.w}x${r.h}`;
  const had = canvas.dataset.layout != null;
  let cell = canvas.dataset.layout === key ? Number(canvas.dataset.cell) : fitIn(r.w, r.h);
  let [width, height] = size(cell);
  if (had && canvas.dataset.layout !== key && (width > canvas.width || height > canvas.height)) {
    const smaller = fitIn(Math.min(canvas.width, r.w), canvas.height);
    if (smaller >= cell * 0.85) [cell, width, height] = [Math.min(cell, smaller), ...size(Math.min(cell, smaller))];
  }
  const slack = (was, now) => was >= now && was - now <= Math.max(48, now * 0.12);
  if (had && canvas.width <= r.w && slack(canvas.width, width) && slack(canvas.height, height)) [width, height] = [canvas.width, canvas.height];
  canvas.dataset.layout = key;
  canvas.dataset.cell = String(cell);
  const bw = cols * cell;
  const bh = rows * cell;
  const g = canvas.getContext("2d");
  // A canvas of the same size is reset, not made anew.
  if (canvas.width === width && canvas.height === height && g.reset) g.reset();
  else {
    canvas.width = width;
    canvas.height = height;
  }
  const ox = Math.floor((canvas.width - bw + left) / 2);
  const oy = header + top;
  g.fillStyle = background;
  g.fillRect(0, 0, canvas.width, canvas.height);
  return { g, cell, bw, bh, ox, oy };
}

// ticks writes the row numbers right-aligned at x, at the heights rowAt(r),
// and the column numbers centred on colAt(c), with their bottom at y (their
// top with below set): every `every` rows and columns.
export function ticks(g, { rows, cols, cell, every, x, rowAt, y, colAt, below = false }) {
  g.fillStyle = "#6b7280";
  g.font = "11px sans-serif";
  g.textAlign = "right";
  g.textBaseline = "middle";
  for (let r = 0; r < rows; r += every) g.fillText(String(r), x, rowAt(r));
  g.textAlign = "center";
  g.textBaseline = below ? "top" : "bottom";
  for (let c = 0; c < cols; c += every) g.fillText(String(c), colAt(c), y);
}

// pill writes a bold label of size pixels in fg on a rounded box of bg
// centred on (cx, cy); pad is the room added to the text's width and
// height, alpha the box's opacity, and box [x0, y0, x1, y1] an area the
// label is kept inside.
export function pill(g, text, cx, cy, { size, bg, fg = "#fff", pad = [10, 6], alpha = 1, box = null }) {
  g.font = `bold ${size}px sans-serif`;
  const w = g.measureText(text).width + pad[0];
  const h = size + pad[1];
  let x = cx - w / 2;
  if (box) {
    const [x0, y0, x1, y1] = box;
    x = Math.max(x0 + 2, Math.min(x1 - w - 2, x));
    cy = Math.max(y0 + h / 2 + 2, Math.min(y1 - h / 2 - 2, cy));
  }
  g.fillStyle = bg;
  g.globalAlpha = alpha;
  g.beginPath();
  g.roundRect(x, cy - h / 2, w, h, h / 2);
  g.fill();
  g.globalAlpha = 1;
  g.fillStyle = fg;
  g.textAlign = "center";
  g.textBaseline = "middle";
  g.fillText(text, x + w / 2, cy + 0.5);
}

// hudWidth is the width a board's header may take: the room's, up to
// minWidth (layout makes the canvas at least that wide).
export const hudWidth = (canvas, minWidth) => Math.min(minWidth, room(canvas).w);

// flow lays out a header's items in lines at most width wide: an item
// that does not fit on its line, or that says br, starts the next one.
// An item is {text, font, colour, glyph, gap, br}: glyph, when set, is
// {width, draw(g, x, y)}, drawn before the text at the line's middle y;
// gap is the room after it (10). It returns the header's height (lines
// of lineHeight, pad above and below) and draw(g), which writes them.
export function flow(g, items, width, { lineHeight = 20, pad = 3, left = 8 } = {}) {
  const placed = [];
  let x = left;
  let line = 0;
  for (const it of items) {
    g.font = it.font;
    const w = (it.glyph ? it.glyph.width : 0) + (it.text ? g.measureText(it.text).width : 0);
    if (x > left && (it.br || x + w > width - left)) {
      line++;
      x = left;
    }
    placed.push({ it, x, line });
    x += w + (it.gap ?? 10);
  }
  return {
    height: (line + 1) * lineHeight + 2 * pad,
    draw(g) {
      for (const { it, x, line } of placed) {
        const y = pad + line * lineHeight + lineHeight / 2;
        let tx = x;
        if (it.glyph) {
          it.glyph.draw(g, x, y);
          tx += it.glyph.width;
        }
        if (!it.text) continue;
        g.font = it.font;
        g.fillStyle = it.colour || "#111";
        g.textAlign = "left";
        g.textBaseline = "middle";
        g.fillText(it.text, tx, y);
      }
    },
  };
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

// shieldPath traces a small heraldic shield centred on (cx, cy).
export function shieldPath(g, cx, cy, r) {
  g.beginPath();
  g.moveTo(cx, cy - r);
  g.lineTo(cx + r * 0.85, cy - r * 0.6);
  g.quadraticCurveTo(cx + r * 0.85, cy + r * 0.5, cx, cy + r);
  g.quadraticCurveTo(cx - r * 0.85, cy + r * 0.5, cx - r * 0.85, cy - r * 0.6);
  g.closePath();
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

// burst strokes eight rays around (x, y), from radius r0 to r1, with the
// current stroke style.
export function burst(g, x, y, r0, r1) {
  g.beginPath();
  for (let k = 0; k < 8; k++) {
    const a = (k * Math.PI) / 4;
    g.moveTo(x + Math.cos(a) * r0, y + Math.sin(a) * r0);
    g.lineTo(x + Math.cos(a) * r1, y + Math.sin(a) * r1);
  }
  g.stroke();
}
