// Charts under the board, per bot and per turn: the answer time (wall
// clock, solid; CPU time, dashed), the memory peak, and the game's score
// (Tanks: the tank's health). Faults are marked on the turn axis; the
// turn shown is a grey line; clicking a chart jumps to the nearest turn.
// Plain canvas, no library.
import { seatColour } from "./games/draw.js";

const W = 720;
const H = 130;
const M = { left: 52, right: 10, top: 20, bottom: 20 };

// scoreOf gives a game's per-turn figure for a seat, and its name.
export const scores = {
  tanks: {
    name: "Health",
    of(frame, seat, ids) {
      const st = frame.state && (frame.state.State || frame.state);
      const tank = st && Array.isArray(st.ContentsInfo) ? st.ContentsInfo.find((c) => c.Type === 0 && c.UserId === ids[seat]) : null;
      return tank ? tank.HealthCount : 0;
    },
  },
  snake: {
    name: "Score",
    of(frame, seat) {
      const s = frame.state && Array.isArray(frame.state.snakes) ? frame.state.snakes.find((x) => x.seat === seat) || frame.state.snakes[seat] : null;
      return s && typeof s.score === "number" ? s.score : null;
    },
  },
  pacman: {
    name: "Score",
    of(frame, seat) {
      const st = frame.state;
      if (!st || !Array.isArray(st.score) || !Array.isArray(st.roles)) return null;
      const role = st.roles[seat];
      return role === 0 || role === 1 ? st.score[role] : null;
    },
  },
};

// series extracts the charts' data from the frames: per chart, per seat,
// one value per frame (null where there is none), and the faults.
export function series(frames, ids, game) {
  const n = ids.length;
  const mk = () => Array.from({ length: n }, () => []);
  const wall = mk(), cpu = mk(), mem = mk(), score = mk();
  const faults = [];
  const faulted = new Array(n).fill(false);
  const sc = scores[game];
  frames.forEach((f, i) => {
    for (let seat = 0; seat < n; seat++) {
      const b = f && f.bots ? f.bots.find((x) => x.seat === seat) : null;
      wall[seat][i] = b && b.asked && b.time_us ? b.time_us / 1000 : null;
      cpu[seat][i] = b && b.asked && b.cpu_us != null ? b.cpu_us / 1000 : null;
      mem[seat][i] = b && b.mem_peak_bytes ? b.mem_peak_bytes / (1 << 20) : null;
      score[seat][i] = f && sc ? sc.of(f, seat, ids) : null;
      if (b && b.status && b.status !== "ok" && !faulted[seat]) {
        faulted[seat] = true;
        faults.push({ index: i, turn: f.turn, seat, status: b.status, detail: b.detail || "" });
      }
    }
  });
  return { wall, cpu, mem, score, faults, scoreName: sc ? sc.name : "Score" };
}

export class Charts {
  // el is the container; onPick(index) is called with the frame clicked.
  constructor(el, onPick) {
    this.el = el;
    this.onPick = onPick;
    this.canvases = {};
    this.state = null;
    for (const [key, label] of [
      ["time", "Answer time"],
      ["mem", "Memory peak"],
      ["score", "Score"],
    ]) {
      const c = document.createElement("canvas");
      c.width = W;
      c.height = H;
      c.className = "chart";
      c.id = `chart-${key}`;
      c.setAttribute("aria-label", label);
      c.addEventListener("click", (e) => this.click(c, e));
      this.canvases[key] = c;
      el.append(c);
    }
  }

  // frame index under a click: the nearest frame by turn.
  click(c, e) {
    if (!this.state) return;
    const r = c.getBoundingClientRect();
    const x = ((e.clientX - r.left) * c.width) / r.width;
    const { frames } = this.state;
    const turn = this.turnAt(x);
    let best = -1;
    frames.forEach((f, i) => {
      if (f && (best < 0 || Math.abs(f.turn - turn) < Math.abs(frames[best].turn - turn))) best = i;
    });
    if (best >= 0) this.onPick(best);
  }

  x(turn) {
    const last = Math.max(1, this.state.lastTurn);
    return M.left + ((W - M.left - M.right) * turn) / last;
  }

  turnAt(x) {
    const last = Math.max(1, this.state.lastTurn);
    return Math.round(((x - M.left) * last) / (W - M.left - M.right));
  }

  // update redraws the charts; the data is worked out again only when
  // frames were added.
  update(frames, index, ids, game) {
    this.el.hidden = !frames.length;
    if (!frames.length) return;
    if (!this.state || this.state.count !== frames.length || this.state.game !== game || this.state.ids !== ids) {
      const s = series(frames, ids, game);
      const last = frames[frames.length - 1];
      this.state = { ...s, frames, count: frames.length, game, ids, lastTurn: last ? last.turn : 0 };
    }
    this.state.index = index;
    const s = this.state;
    this.draw(this.canvases.time, "Answer time, ms (solid: wall clock, dashed: CPU)", [
      { data: s.wall, dash: [] },
      { data: s.cpu, dash: [4, 3] },
    ]);
    this.draw(this.canvases.mem, "Memory peak, MiB", [{ data: s.mem, dash: [] }]);
    this.draw(this.canvases.score, s.scoreName, [{ data: s.score, dash: [] }]);
  }

  draw(c, title, lines) {
    const g = c.getContext("2d");
    const s = this.state;
    g.clearRect(0, 0, W, H);
    g.fillStyle = "#fff";
    g.fillRect(0, 0, W, H);
    let top = 0;
    let points = 0;
    for (const l of lines) for (const seat of l.data) for (const v of seat) if (v != null) top = Math.max(top, v);
    top = niceCeil(top);
    const y = (v) => H - M.bottom - ((H - M.top - M.bottom) * v) / top;
    // Axes and labels.
    g.strokeStyle = "#d9dde5";
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(M.left, M.top);
    g.lineTo(M.left, H - M.bottom);
    g.lineTo(W - M.right, H - M.bottom);
    g.stroke();
    g.fillStyle = "#374151";
    g.font = "12px sans-serif";
    g.textBaseline = "top";
    g.fillText(title, M.left, 3);
    g.font = "11px sans-serif";
    g.fillStyle = "#6b7280";
    g.textAlign = "right";
    g.textBaseline = "middle";
    g.fillText(fmt(top), M.left - 4, M.top);
    g.fillText("0", M.left - 4, H - M.bottom);
    g.textBaseline = "top";
    g.fillText(`turn ${s.lastTurn}`, W - M.right, H - M.bottom + 4);
    g.textAlign = "left";
    g.fillText("turn 0", M.left, H - M.bottom + 4);
    // Faults on the turn axis: a red tick and the status.
    for (const f of s.faults) {
      const x = this.x(f.turn);
      g.strokeStyle = "#b91c1c";
      g.setLineDash([2, 2]);
      g.beginPath();
      g.moveTo(x, M.top);
      g.lineTo(x, H - M.bottom);
      g.stroke();
      g.setLineDash([]);
      g.fillStyle = seatColour(f.seat);
      g.beginPath();
      g.moveTo(x, H - M.bottom - 7);
      g.lineTo(x - 5, H - M.bottom + 2);
      g.lineTo(x + 5, H - M.bottom + 2);
      g.fill();
      g.fillStyle = "#b91c1c";
      g.textBaseline = "top";
      g.fillText(f.status, Math.min(x + 4, W - 60), M.top);
    }
    // The series.
    for (const l of lines) {
      g.setLineDash(l.dash);
      l.data.forEach((vals, seat) => {
        g.strokeStyle = seatColour(seat);
        g.lineWidth = 1.5;
        g.beginPath();
        let pen = false;
        vals.forEach((v, i) => {
          if (v == null || !s.frames[i]) {
            pen = false;
            return;
          }
          points++;
          const px = this.x(s.frames[i].turn), py = y(v);
          if (pen) g.lineTo(px, py);
          else g.moveTo(px, py);
          pen = true;
        });
        g.stroke();
      });
    }
    g.setLineDash([]);
    // The turn shown.
    const cur = s.frames[s.index];
    if (cur) {
      const x = this.x(cur.turn);
      g.strokeStyle = "rgba(31, 41, 55, .45)";
      g.lineWidth = 1;
      g.beginPath();
      g.moveTo(x, M.top);
      g.lineTo(x, H - M.bottom);
      g.stroke();
    }
    c.dataset.points = String(points);
    c.dataset.faults = s.faults.map((f) => `${f.seat}:${f.status}@${f.turn}`).join(" ");
  }
}

function niceCeil(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function fmt(v) {
  return v >= 100 ? v.toFixed(0) : v >= 1 ? String(Math.round(v * 10) / 10) : String(Math.round(v * 100) / 100);
}
