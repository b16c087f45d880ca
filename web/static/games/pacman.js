// Pac-Man vs ghosts: the level's board (walls, beans, bonus beans, skill
// items, the portal open or closed) as it stands after this frame's round,
// the Pac-Man and the three ghosts with this round's paths as faint trails
// (wall bumps as a short stub against the wall) and their final cells
// solid, the skills in effect, the shield and the invulnerability after a
// catch, the scores, level and round, and this round's events.
//
// Each frame carries all of it (engine/pacman's doc.go lists the fields).
// Other frames, when at hand, only tell which way the Pac-Man faces when
// it did not move, and the seats' colours before the roles are claimed.
// Rows (x) grow upward, as the game's "up" is x+1.
import { seatColour, num, shortId, layout, ticks, pill, headerStrip, shieldPath, cross, flow, hudWidth } from "./draw.js";

const MARGIN = 18; // coordinate ticks: rows on the left, columns below
const MIN_WIDTH = 540;

// The board's characters.
const CELL = { wall: "#", empty: " ", bean: ".", bonus: "o", speed: "s", magnet: "m", shield: "h", double: "d", freeze: "f", portal: "@" };
// pacman_skills order, with how each is drawn.
const SKILLS = [
  { name: "double", colour: "#ea580c", glyph: "2×" },
  { name: "speed", colour: "#16a34a", glyph: "S" },
  { name: "magnet", colour: "#9333ea", glyph: "M" },
  { name: "shield", colour: "#0891b2", glyph: "" },
  { name: "freeze", colour: "#0ea5e9", glyph: "F" },
];
const ITEM = { [CELL.double]: 0, [CELL.speed]: 1, [CELL.magnet]: 2, [CELL.shield]: 3, [CELL.freeze]: 4 };
const EVENTS = { 0: "Pac-Man eaten by a ghost", 1: "shield destroyed", 2: "level finished", 3: "level timeout" };

const WALL = "#334155";
const GROUND = "#f4f1e8";
const BEAN = "#b45309";
const BONUS = "#f59e0b";
const PORTAL = "#7c3aed";
const NEUTRAL_PAC = "#ca8a04";
const NEUTRAL_GHOST = "#64748b";

const isCell = (a) => Array.isArray(a) && a.length >= 2 && Number.isFinite(a[0]) && Number.isFinite(a[1]);
const arr = (a) => (Array.isArray(a) ? a : []);

// ---- Paths: wall bumps are entries with −100 (Pac-Man) or −200 (ghosts)
// added to both coordinates.

function decodePath(path, offset) {
  const out = [];
  for (const p of arr(path)) {
    if (!isCell(p)) continue;
    if (p[0] < 0 || p[1] < 0) {
      let x = p[0] + offset;
      let y = p[1] + offset;
      while ((x < -50 || y < -50) && x < 1e6) {
        x += 100;
        y += 100;
      }
      out.push({ x, y, bump: true });
    } else out.push({ x: p[0], y: p[1], bump: false });
  }
  return out;
}

// The direction of the last move (or bump) of a path, as [dx, dy].
function lastDirection(path) {
  for (let k = path.length - 1; k > 0; k--) {
    let prev = null;
    for (let m = k - 1; m >= 0; m--) {
      if (!path[m].bump) {
        prev = path[m];
        break;
      }
    }
    if (!prev) continue;
    const dx = Math.sign(path[k].x - prev.x);
    const dy = Math.sign(path[k].y - prev.y);
    if (dx || dy) return [dx, dy];
  }
  return null;
}

// The seats of the Pac-Man and the ghosts, from the roles claimed; before
// the claims, from a later frame; -1 when unknown.
function seatsOf(st, frames) {
  let roles = arr(st.roles);
  if (!roles.some((r) => r === 0 || r === 1)) {
    for (let k = frames.length - 1; k >= 0; k--) {
      const r = frames[k] && frames[k].state ? arr(frames[k].state.roles) : [];
      if (r.some((v) => v === 0 || v === 1)) {
        roles = r;
        break;
      }
    }
  }
  // Both seats claiming one role ("Same Role"): neither plays it.
  if (roles.length === 2 && roles[0] === roles[1]) return { pac: -1, ghosts: -1, same: roles[0] };
  let pac = roles.indexOf(0);
  let ghosts = roles.indexOf(1);
  if (pac < 0 && ghosts >= 0 && roles.length === 2) pac = 1 - ghosts;
  if (ghosts < 0 && pac >= 0 && roles.length === 2) ghosts = 1 - pac;
  return { pac, ghosts };
}

// ---- Shapes.

// A skill badge: the item on the board and the skill in the header.
function skillBadge(g, skill, cx, cy, s, dim) {
  const sk = SKILLS[skill];
  g.globalAlpha = dim ? 0.3 : 1;
  if (sk.name === "shield") {
    shieldPath(g, cx, cy, s * 0.5);
    g.fillStyle = sk.colour;
    g.fill();
    g.strokeStyle = "#164e63";
    g.lineWidth = 1;
    g.stroke();
  } else {
    g.fillStyle = sk.colour;
    g.beginPath();
    g.roundRect(cx - s / 2, cy - s / 2, s, s, s * 0.25);
    g.fill();
    g.fillStyle = "#fff";
    g.font = `bold ${Math.max(6, Math.floor(s * (sk.glyph.length > 1 ? 0.55 : 0.72)))}px sans-serif`;
    g.textAlign = "center";
    g.textBaseline = "middle";
    g.fillText(sk.glyph, cx, cy + 0.5);
  }
  g.globalAlpha = 1;
}

function drawPacman(g, cx, cy, r, dir, colour) {
  // dir is the screen direction [sx, sy].
  const a = Math.atan2(dir[1], dir[0]);
  const mouth = 0.7;
  g.fillStyle = colour;
  g.beginPath();
  g.moveTo(cx, cy);
  g.arc(cx, cy, r, a + mouth / 2, a - mouth / 2 + 2 * Math.PI);
  g.closePath();
  g.fill();
  g.strokeStyle = "#111";
  g.lineWidth = Math.max(1, r / 7);
  g.stroke();
  // The eye, on the upper side of the mouth.
  const side = dir[0] < 0 ? 1 : -1;
  const ex = cx + Math.cos(a + side * 1.6) * r * 0.5;
  const ey = cy + Math.sin(a + side * 1.6) * r * 0.5;
  g.fillStyle = "#111";
  g.beginPath();
  g.arc(ex, ey, Math.max(1, r * 0.13), 0, 2 * Math.PI);
  g.fill();
}

function drawGhost(g, cx, cy, r, dir, colour, label) {
  const top = cy - r;
  const bottom = cy + r * 0.95;
  g.fillStyle = colour;
  g.beginPath();
  g.moveTo(cx - r, bottom);
  g.lineTo(cx - r, cy - r * 0.05);
  g.arc(cx, cy - r * 0.05, r, Math.PI, 0);
  g.lineTo(cx + r, bottom);
  const w = (2 * r) / 3;
  for (let k = 0; k < 3; k++) {
    const x1 = cx + r - k * w;
    g.quadraticCurveTo(x1 - w / 2, bottom - r * 0.45, x1 - w, bottom);
  }
  g.closePath();
  g.fill();
  g.strokeStyle = "rgba(0,0,0,0.55)";
  g.lineWidth = Math.max(1, r / 8);
  g.stroke();
  for (const s of [-1, 1]) {
    const ex = cx + s * r * 0.38;
    const ey = top + r * 0.85;
    g.fillStyle = "#fff";
    g.beginPath();
    g.ellipse(ex, ey, r * 0.27, r * 0.33, 0, 0, 2 * Math.PI);
    g.fill();
    g.fillStyle = "#111";
    g.beginPath();
    g.arc(ex + dir[0] * r * 0.12, ey + dir[1] * r * 0.14, r * 0.14, 0, 2 * Math.PI);
    g.fill();
  }
  if (label != null) {
    g.fillStyle = "#fff";
    g.font = `bold ${Math.max(7, Math.floor(r * 0.8))}px sans-serif`;
    g.textAlign = "center";
    g.textBaseline = "middle";
    g.fillText(String(label), cx, cy + r * 0.5);
  }
}

// overText says how the match ended: who won, on the scores, when it
// ended with its last level (the original's reasons, "Pacman ate all the
// beans!!!" or "time is up", say nothing of who won); else the reason (a
// bot's illegal action).
function overText(reason, score) {
  const how = { "Pacman ate all the beans!!!": "the last level's beans all eaten", "time is up": "the last level timed out" }[reason];
  if (!how) return reason;
  const [pac, ghosts] = [num(score[0]), num(score[1])];
  const who = pac > ghosts ? "Pac-Man wins" : ghosts > pac ? "the ghosts win" : "a draw";
  return `${who}, ${pac} to ${ghosts} (${how})`;
}

// headerItems are the header's items (see flow): the level and round,
// the beans left and the portal; the two sides and their scores; the
// skills at the start of the round, the invulnerability and the events.
function headerItems(st, ids, level, seats, hasPortal) {
  const rounds = num(st.max_rounds) > 0 ? st.max_rounds : null;
  const portalRound = num(st.portal_round);
  const portalOpen = st.portal_available === true;
  let portalText = "no portal";
  if (hasPortal || portalRound > 0) portalText = portalOpen ? "portal open" : `portal closed${portalRound > 0 ? ` (opens after round ${portalRound})` : ""}`;
  const items = [
    { text: `Level ${level != null ? level : "?"} · round ${num(st.round)}${rounds ? "/" + rounds : ""}`, font: "bold 13px sans-serif", colour: "#111", gap: 16 },
    { text: `beans left ${num(st.beans_left)}`, font: "12px sans-serif", colour: "#374151", gap: 16 },
    { text: portalText, font: portalOpen ? "bold 12px sans-serif" : "12px sans-serif", colour: portalOpen ? PORTAL : "#374151" },
  ];
  const score = arr(st.score);
  const pacColour = seats.pac >= 0 ? seatColour(seats.pac) : NEUTRAL_PAC;
  const ghostColour = seats.ghosts >= 0 ? seatColour(seats.ghosts) : NEUTRAL_GHOST;
  const side = (seat, name, colour, points, glyph, br) => {
    const id = seat >= 0 && ids[seat] !== undefined ? shortId(ids[seat]) : seat >= 0 ? `seat ${seat}` : "";
    items.push({ glyph: { width: 18, draw: (g, x, y) => glyph(g, x + 7, y, colour) }, text: name, font: "12px sans-serif", colour: "#374151", gap: 4, br });
    if (id) items.push({ text: id, font: "bold 12px sans-serif", colour: "#111", gap: 6 });
    items.push({ text: String(num(points)), font: "bold 14px sans-serif", colour, gap: 22 });
  };
  side(seats.pac, "Pac-Man", pacColour, score[0], (g, x, y, c) => drawPacman(g, x, y, 7, [1, 0], c), true);
  side(seats.ghosts, "Ghosts", ghostColour, score[1], (g, x, y, c) => drawGhost(g, x, y, 7, [0, 0], c, null), false);
  if (seats.same != null) items.push({ text: `both seats claimed the ${seats.same === 0 ? "Pac-Man" : "ghosts"}`, font: "bold 12px sans-serif", colour: "#b91c1c" });
  const skills = arr(st.pacman_skills);
  items.push({ text: "skills", font: "11px sans-serif", colour: "#6b7280", gap: 6, br: true });
  SKILLS.forEach((sk, k) => {
    const v = num(skills[k]);
    items.push({ glyph: { width: 16, draw: (g, x, y) => skillBadge(g, k, x + 7, y, 14, v <= 0) }, text: String(v), font: v > 0 ? "bold 12px sans-serif" : "12px sans-serif", colour: v > 0 ? "#111" : "#9ca3af", gap: 8 });
  });
  const invul = num(st.invulnerable);
  if (invul > 0) items.push({ text: `invulnerable ${invul} more round${invul === 1 ? "" : "s"}`, font: "bold 12px sans-serif", colour: "#a16207" });
  const events = arr(st.events);
  const evText = events.map((e) => EVENTS[e] || `event ${e}`).join(", ");
  if (evText) items.push({ text: evText, font: "bold 12px sans-serif", colour: events.includes(0) ? "#b91c1c" : "#111" });
  return items;
}

// layers keeps, per canvas, the board's cells as last painted: a frame
// paints only the cells that differ (a bean eaten, an item taken), not
// the whole board, whatever its size.
const layers = new WeakMap();

// paintBoard brings the canvas's board layer to board (rows bottom to
// top, as drawn) and returns the layer and the portal's cell, if any. The
// cells that changed are painted kind by kind, each kind one path: a new
// level's 1,681 cells are a few fills, not thousands.
function paintBoard(canvas, board, rows, cols, cell) {
  let l = layers.get(canvas);
  if (!l || l.rows !== rows || l.cols !== cols || l.cell !== cell) {
    // A new level is painted whole, on the layer it had when it is large
    // enough: making one costs more than painting it.
    let layer = l && l.layer.width >= cols * cell && l.layer.height >= rows * cell ? l.layer : null;
    if (!layer) {
      layer = typeof OffscreenCanvas !== "undefined" ? new OffscreenCanvas(cols * cell, rows * cell) : document.createElement("canvas");
      layer.width = cols * cell;
      layer.height = rows * cell;
    }
    l = { layer, rows, cols, cell, drawn: [] };
    layers.set(canvas, l);
  }
  // Ground and walls are kept as runs of cells along a row ([sx, sy,
  // width]): a new level's board is a few hundred rectangles, not 1,681.
  const changed = { ground: [], [CELL.wall]: [], [CELL.bean]: [], [CELL.bonus]: [], items: [] };
  let portal = null;
  for (let x = 0; x < rows; x++) {
    const row = board[x] || "";
    const was = l.drawn[x];
    const p = row.indexOf(CELL.portal);
    if (p >= 0 && p < cols) portal = [x, p];
    if (row === was) continue;
    const sy = (rows - 1 - x) * cell;
    let ground = null;
    let wall = null;
    for (let y = 0; y < cols; y++) {
      const v = row[y] || CELL.wall;
      if (was !== undefined && (was[y] || CELL.wall) === v) {
        ground = wall = null;
        continue;
      }
      const at = [y * cell, sy];
      if (ground) ground[2] += cell;
      else changed.ground.push((ground = [at[0], sy, cell]));
      if (v !== CELL.wall) wall = null;
      else if (wall) wall[2] += cell;
      else changed[v].push((wall = [at[0], sy, cell]));
      if (v !== CELL.wall && changed[v]) changed[v].push(at);
      else if (ITEM[v] !== undefined) changed.items.push([at, v]);
    }
    l.drawn[x] = row;
  }
  const g = l.layer.getContext("2d");
  const rects = (runs, colour) => {
    if (!runs.length) return;
    g.fillStyle = colour;
    g.beginPath();
    for (const [sx, sy, w] of runs) g.rect(sx, sy, w, cell);
    g.fill();
  };
  const dots = (cells, r) => {
    g.beginPath();
    for (const [sx, sy] of cells) {
      g.moveTo(sx + cell / 2 + r, sy + cell / 2);
      g.arc(sx + cell / 2, sy + cell / 2, r, 0, 2 * Math.PI);
    }
  };
  rects(changed.ground, GROUND);
  rects(changed[CELL.wall], WALL);
  if (changed[CELL.bean].length) {
    g.fillStyle = BEAN;
    dots(changed[CELL.bean], Math.max(1.5, cell * 0.12));
    g.fill();
  }
  if (changed[CELL.bonus].length) {
    g.fillStyle = BONUS;
    g.strokeStyle = "#92400e";
    g.lineWidth = 1;
    dots(changed[CELL.bonus], Math.max(2.5, cell * 0.26));
    g.fill();
    g.stroke();
  }
  for (const [[sx, sy], v] of changed.items) skillBadge(g, ITEM[v], sx + cell / 2, sy + cell / 2, cell * 0.78, false);
  return { layer: l.layer, portal };
}

export const pacman = {
  draw(canvas, frame, { ids = [], frames = [], index = 0 } = {}) {
    const st = (frame && frame.state) || {};
    const all = Array.isArray(frames) ? frames : [];
    const level = Number.isInteger(st.level) ? st.level : null;
    const board = arr(st.board).slice(0, 200).map((r) => String(r).slice(0, 200));
    const rows = board.length || 22;
    const cols = board.length ? Math.max(1, ...board.map((r) => r.length)) : rows;

    const seats = seatsOf(st, all);
    const head = flow(canvas.getContext("2d"), headerItems(st, ids, level, seats, board.some((r) => r.includes(CELL.portal))), hudWidth(canvas, MIN_WIDTH), { lineHeight: 19 });
    const { g, cell, bw, bh, ox, oy } = layout(canvas, rows, cols, { header: head.height, left: MARGIN, right: 8, top: 2, bottom: MARGIN + 2, minWidth: MIN_WIDTH });
    const px = (y) => ox + y * cell; // columns left to right
    const py = (x) => oy + (rows - 1 - x) * cell; // rows bottom to top
    const cx = (x, y) => px(y) + cell / 2;
    const cy = (x) => py(x) + cell / 2;

    // Coordinate ticks: rows on the left, columns below.
    ticks(g, { rows, cols, cell, every: cell >= 20 ? 2 : 5, x: ox - 3, rowAt: cy, y: oy + bh + 3, colAt: (y) => cx(0, y), below: true });
    g.textAlign = "left";
    g.fillText("x↑ y→", 2, oy + bh + 3);

    // The board: its cells come from a layer kept per canvas, where only
    // the cells that changed since the frame drawn last are painted again.
    let portal = null;
    if (board.length) {
      const painted = paintBoard(canvas, board, rows, cols, cell);
      portal = painted.portal;
      g.drawImage(painted.layer, 0, 0, bw, bh, ox, oy, bw, bh);
    } else {
      g.fillStyle = GROUND;
      g.fillRect(ox, oy, bw, bh);
      g.fillStyle = "#6b7280";
      g.font = "13px sans-serif";
      g.textAlign = "center";
      g.textBaseline = "middle";
      g.fillText("(this frame carries no board)", ox + bw / 2, oy + bh / 2);
    }

    // The portal: a purple swirl when open, a grey dashed ring when closed.
    const portalOpen = st.portal_available === true;
    if (portal) {
      const x = cx(portal[0], portal[1]);
      const y = cy(portal[0]);
      if (portalOpen) {
        g.fillStyle = "rgba(124,58,237,0.25)";
        g.beginPath();
        g.arc(x, y, cell * 0.95, 0, 2 * Math.PI);
        g.fill();
        for (let k = 0; k < 3; k++) {
          g.strokeStyle = k % 2 ? "#c4b5fd" : PORTAL;
          g.lineWidth = Math.max(1.5, cell / 9);
          g.beginPath();
          g.arc(x, y, cell * (0.48 - k * 0.14), 0, 2 * Math.PI);
          g.stroke();
        }
      } else {
        g.strokeStyle = "#6b7280";
        g.lineWidth = Math.max(1.5, cell / 10);
        g.setLineDash([2, 2]);
        g.beginPath();
        g.arc(x, y, cell * 0.42, 0, 2 * Math.PI);
        g.stroke();
        g.setLineDash([]);
        g.fillStyle = "rgba(107,114,128,0.35)";
        g.beginPath();
        g.arc(x, y, cell * 0.25, 0, 2 * Math.PI);
        g.fill();
      }
    }

    // Who plays what.
    const finishedAtPortal = portal && arr(st.events).includes(2) && decodePath(st.pacman_step_block, 100).some((p) => !p.bump && p.x === portal[0] && p.y === portal[1]);
    if (finishedAtPortal) {
      g.strokeStyle = PORTAL;
      g.lineWidth = Math.max(2, cell / 5);
      g.beginPath();
      g.arc(cx(portal[0], portal[1]), cy(portal[0]), cell * 1.3, 0, 2 * Math.PI);
      g.stroke();
    }
    const pacColour = seats.pac >= 0 ? seatColour(seats.pac) : NEUTRAL_PAC;
    const ghostColour = seats.ghosts >= 0 ? seatColour(seats.ghosts) : NEUTRAL_GHOST;
    const events = arr(st.events);
    const eaten = events.includes(0);
    const shieldBroken = events.includes(1);
    const skills = arr(st.pacman_skills);
    const frozen = num(skills[4]) > 0;

    // A path as a faint trail: lines between the cells reached, a stub
    // against the wall for a bump, an open circle where it started.
    const bumps = [];
    const trail = (path, colour, width) => {
      if (path.length < 2) return null;
      let cur = path[0].bump ? null : path[0];
      g.strokeStyle = colour;
      g.fillStyle = colour;
      g.lineCap = "round";
      g.lineJoin = "round";
      g.globalAlpha = 0.45;
      if (cur) {
        g.lineWidth = Math.max(1, width / 3);
        g.beginPath();
        g.arc(cx(cur.x, cur.y), cy(cur.x), cell * 0.3, 0, 2 * Math.PI);
        g.stroke();
      }
      for (let k = 1; k < path.length; k++) {
        const p = path[k];
        if (!cur) {
          if (!p.bump) cur = p;
          continue;
        }
        const x0 = cx(cur.x, cur.y);
        const y0 = cy(cur.x);
        const x1 = cx(p.x, p.y);
        const y1 = cy(p.x);
        g.lineWidth = width;
        if (p.bump) {
          // Toward the wall: a stub here, the impact drawn over the movers.
          const dx = x1 - x0;
          const dy = y1 - y0;
          const n = Math.hypot(dx, dy) || 1;
          g.beginPath();
          g.moveTo(x0, y0);
          g.lineTo(x0 + (dx / n) * cell * 0.5, y0 + (dy / n) * cell * 0.5);
          g.stroke();
          bumps.push({ x: x0 + (dx / n) * cell * 0.5, y: y0 + (dy / n) * cell * 0.5, ux: dx / n, uy: dy / n, colour });
        } else if (p.x !== cur.x || p.y !== cur.y) {
          g.beginPath();
          g.moveTo(x0, y0);
          g.lineTo(x1, y1);
          g.stroke();
          cur = p;
        }
      }
      g.globalAlpha = 1;
      return cur;
    };

    // Ghosts' trails first, then the Pac-Man's: the movers go on top.
    const ghostPaths = arr(st.ghosts_step_block).map((p) => decodePath(p, 200));
    const pacPath = decodePath(st.pacman_step_block, 100);
    ghostPaths.forEach((p) => trail(p, ghostColour, Math.max(2, cell * 0.22)));
    const caughtAt = trail(pacPath, pacColour, Math.max(2, cell * 0.3));

    // The Pac-Man: solid where it ends; when eaten, where it was caught and
    // the cell it respawned on.
    const pc = isCell(st.pacman_coord) ? st.pacman_coord : caughtAt ? [caughtAt.x, caughtAt.y] : null;
    let dir = lastDirection(pacPath);
    if (!dir && index > 0 && all[index - 1] && all[index - 1].state) dir = lastDirection(decodePath(all[index - 1].state.pacman_step_block, 100));
    const screenDir = dir ? [dir[1], -dir[0]] : [1, 0];
    // Ghosts: solid at their final cells, their number inside.
    const ghostCoords = arr(st.ghosts_coord);
    // Ghosts sharing a cell are fanned out a little so that each shows.
    const stacked = {};
    ghostCoords.forEach((c) => isCell(c) && (stacked[c] = (stacked[c] || 0) + 1));
    const seen = {};
    ghostCoords.forEach((c, j) => {
      if (!isCell(c)) return;
      const d = lastDirection(ghostPaths[j] || []);
      const rank = (seen[c] = (seen[c] || 0) + 1) - 1;
      const gx = cx(c[0], c[1]) + (rank - (stacked[c] - 1) / 2) * cell * 0.32;
      const gy = cy(c[0]);
      drawGhost(g, gx, gy, cell * 0.52, d ? [d[1], -d[0]] : [0, 0], ghostColour, cell >= 12 ? j : null);
      if (frozen) {
        g.strokeStyle = "#0ea5e9";
        g.lineWidth = Math.max(1.5, cell / 8);
        g.strokeRect(gx - cell * 0.6, gy - cell * 0.6, cell * 1.2, cell * 1.2);
      }
    });

    // Where the Pac-Man was caught, over the ghost that caught it.
    if (eaten && caughtAt) {
      const x = cx(caughtAt.x, caughtAt.y);
      const y = cy(caughtAt.x);
      g.globalAlpha = 0.5;
      drawPacman(g, x, y, cell * 0.5, screenDir, "#9ca3af");
      g.globalAlpha = 1;
      g.strokeStyle = "#b91c1c";
      g.lineWidth = Math.max(2, cell / 6);
      const r = cell * 0.5;
      cross(g, x, y, r);
      if (pc) {
        g.strokeStyle = "rgba(185,28,28,0.6)";
        g.lineWidth = 1.5;
        g.setLineDash([4, 4]);
        g.beginPath();
        g.moveTo(x, y);
        g.lineTo(cx(pc[0], pc[1]), cy(pc[0]));
        g.stroke();
        g.setLineDash([]);
      }
    }

    const invul = num(st.invulnerable);
    if (pc) {
      const x = cx(pc[0], pc[1]);
      const y = cy(pc[0]);
      if (num(skills[3]) > 0 || shieldBroken) {
        g.strokeStyle = SKILLS[3].colour;
        g.lineWidth = Math.max(2, cell / 6);
        g.setLineDash(shieldBroken ? [3, 3] : []);
        g.beginPath();
        g.arc(x, y, cell * 0.72, 0, 2 * Math.PI);
        g.stroke();
        g.setLineDash([]);
      }
      g.globalAlpha = invul > 0 ? 0.6 : 1;
      drawPacman(g, x, y, cell * 0.58, screenDir, pacColour);
      g.globalAlpha = 1;
      if (invul > 0) {
        g.strokeStyle = "#facc15";
        g.lineWidth = Math.max(1.5, cell / 9);
        g.setLineDash([2, 3]);
        g.beginPath();
        g.arc(x, y, cell * 0.85, 0, 2 * Math.PI);
        g.stroke();
        g.setLineDash([]);
      }
    }

    // Wall bumps: a bar against the wall and a spark into it.
    for (const b of bumps) {
      const r = cell * 0.42;
      g.lineCap = "round";
      g.strokeStyle = "#fff";
      g.lineWidth = Math.max(3, cell / 4.5);
      const bar = () => {
        g.beginPath();
        g.moveTo(b.x - b.uy * r, b.y + b.ux * r);
        g.lineTo(b.x + b.uy * r, b.y - b.ux * r);
        g.stroke();
      };
      bar();
      g.strokeStyle = b.colour;
      g.lineWidth = Math.max(2, cell / 7);
      bar();
      g.strokeStyle = "#facc15";
      g.lineWidth = Math.max(1, cell / 12);
      g.beginPath();
      for (const a of [-0.6, 0, 0.6]) {
        const vx = b.ux * Math.cos(a) - b.uy * Math.sin(a);
        const vy = b.ux * Math.sin(a) + b.uy * Math.cos(a);
        g.moveTo(b.x + vx * cell * 0.12, b.y + vy * cell * 0.12);
        g.lineTo(b.x + vx * cell * 0.38, b.y + vy * cell * 0.38);
      }
      g.stroke();
    }

    // This round's catches at their cells.
    const label = Math.max(11, Math.min(13, Math.floor(cell * 0.8)));
    const by = num(st.caught_by, -1);
    // Above the cell, or below it near the top edge.
    const labelY = (x) => (py(x) - cell * 0.9 - label / 2 - 5 < oy ? py(x) + cell * 1.7 + label / 2 : py(x) - cell * 0.7 - label / 2);
    if (eaten && caughtAt) {
      pill(g, `eaten${by >= 0 ? " by ghost " + by : ""}`, cx(caughtAt.x, caughtAt.y), labelY(caughtAt.x), { size: label, bg: "#b91c1c", alpha: 0.88, box: [ox, oy, ox + bw, oy + bh] });
    } else if (shieldBroken && pc) {
      pill(g, `shield broken${by >= 0 ? " by ghost " + by : ""}`, cx(pc[0], pc[1]), labelY(pc[0]), { size: label, bg: SKILLS[3].colour, alpha: 0.88, box: [ox, oy, ox + bw, oy + bh] });
    }

    // Level ends and the end of the match: a banner over the board.
    const banners = [];
    if (events.includes(2)) banners.push(`Level ${level != null ? level : ""} finished` + (st.init && st.init.level ? ` · next: level ${st.init.level}` : ""));
    if (events.includes(3)) banners.push(`Level ${level != null ? level : ""} timed out · ghosts +75` + (st.init && st.init.level ? ` · next: level ${st.init.level}` : ""));
    if (typeof st.StopReason === "string" && st.StopReason) banners.push(`Match over: ${overText(st.StopReason, arr(st.score))}`);
    if (banners.length) {
      g.font = "bold 16px sans-serif";
      const maxW = Math.min(bw - 10, 520);
      // Long reasons (a bot's illegal action) are wrapped.
      const lines = [];
      for (const b of banners) {
        let line = "";
        for (const word of b.split(" ")) {
          const next = line ? line + " " + word : word;
          if (line && g.measureText(next).width > maxW - 24) {
            lines.push(line);
            line = word;
          } else line = next;
        }
        lines.push(line);
      }
      banners.splice(0, banners.length, ...lines.slice(0, 8));
      const w = Math.min(maxW, Math.max(...banners.map((b) => g.measureText(b).width)) + 30);
      const h = banners.length * 24 + 14;
      const bx = ox + bw / 2 - w / 2;
      const by2 = oy + Math.min(bh * 0.12, 40); // near the top: the portal is in the middle
      g.fillStyle = "rgba(17,24,39,0.82)";
      g.beginPath();
      g.roundRect(bx, by2, w, h, 8);
      g.fill();
      g.fillStyle = "#fff";
      g.textAlign = "center";
      g.textBaseline = "middle";
      banners.forEach((b, k) => g.fillText(b, ox + bw / 2, by2 + 19 + k * 24, w - 12));
    }

    // ---- The header: level and round, the two sides, skills and events.
    headerStrip(g, canvas.width, head.height);
    head.draw(g);
    // Where a bot's annotations go: [row, column], a cell's centre.
    return { at: (x, y) => [px(y) + cell / 2, py(x) + cell / 2], cell };
  },
};
