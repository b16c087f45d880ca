// Charts under the board, per bot and per turn: the answer time (wall
// clock, solid; CPU time, dashed), the memory peak, and the game's score
// (Tanks: the tank's health). Faults are marked on the turn axis; the
// turn shown is a grey line; clicking a chart jumps to the nearest turn.
// Plain canvas, no library.
//
// A frame costs the same at turn 10 and turn 10,000: each chart keeps its
// lines on a canvas of its own and a new frame only adds its points to
// them; a paint copies that canvas and draws the turn shown. The lines
// are drawn again only when a scale grows: the turn axis doubles, so that
// happens a few times a match, and the value axis grows in steps.
import { seatColour } from "./games/draw.js";

const WIDE = 720; // a chart's width where there is room for it
// STEP is the most frames a chart draws at a call: a long match's chart
// drawn afresh (a scale grew, the match ended) takes a few animation
// frames, none of them long.
const STEP = 300;
const H = 130;
const M = { left: 52, right: 10, top: 20, bottom: 20 };

// scores give a game's per-turn figure for a seat, and its name.
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

// The charts: what each plots, by seat, from the series.
const CHARTS = [
  { key: "time", label: "Answer time", title: "Answer time, ms (solid: wall clock, dashed: CPU)", lines: [{ data: "wall", dash: [] }, { data: "cpu", dash: [4, 3] }] },
  { key: "mem", label: "Memory peak", title: "Memory peak, MiB", lines: [{ data: "mem", dash: [] }] },
  { key: "score", label: "Score", title: null, lines: [{ data: "score", dash: [] }] },
];

// Series are the charts' data, one value per frame and seat (null where
// there is none), built a frame at a time (add). A seat's first answer
// is its warm-up: it may take the start-up's whole allowance, so it is
// kept off the answer-time scale and named apart (warmUp).
class Series {
  constructor(ids, game) {
    this.ids = ids;
    this.game = game;
    const n = ids.length;
    const mk = () => Array.from({ length: n }, () => []);
    this.wall = mk();
    this.cpu = mk();
    this.mem = mk();
    this.score = mk();
    this.turns = [];
    this.faults = [];
    this.faulted = new Array(n).fill(false);
    this.warmUp = new Array(n).fill(null); // {index, ms} of each seat's warm-up
    this.sc = scores[game];
    this.scoreName = this.sc ? this.sc.name : "Score";
  }

  get count() {
    return this.turns.length;
  }

  // add appends frame i (the frames come in order, none skipped).
  add(f, i) {
    this.turns[i] = f ? f.turn : null;
    for (let seat = 0; seat < this.ids.length; seat++) {
      const b = f && f.bots ? f.bots.find((x) => x.seat === seat) : null;
      let wall = b && b.asked && b.time_us ? b.time_us / 1000 : null;
      let cpu = b && b.asked && b.cpu_us != null ? b.cpu_us / 1000 : null;
      if (wall != null && this.warmUp[seat] === null) {
        this.warmUp[seat] = { index: i, ms: wall };
        wall = cpu = null;
      }
      this.wall[seat][i] = wall;
      this.cpu[seat][i] = cpu;
      this.mem[seat][i] = b && b.mem_peak_bytes ? b.mem_peak_bytes / (1 << 20) : null;
      this.score[seat][i] = f && this.sc ? this.sc.of(f, seat, this.ids) : null;
      if (b && b.status && b.status !== "ok" && !this.faulted[seat]) {
        this.faulted[seat] = true;
        this.faults.push({ index: i, turn: f.turn, seat, status: b.status, detail: b.detail || "" });
      }
    }
  }
}

export class Charts {
  // el is the container; onPick(index) is called with the frame clicked.
  constructor(el, onPick) {
    this.el = el;
    this.onPick = onPick;
    this.charts = CHARTS.map((spec) => {
      const c = document.createElement("canvas");
      c.width = WIDE;
      c.height = H;
      c.className = "chart";
      c.id = `chart-${spec.key}`;
      c.setAttribute("aria-label", spec.label);
      c.addEventListener("click", (e) => this.click(c, e));
      el.append(c);
      // layer holds the chart's lines, drawn a frame at a time.
      const layer = document.createElement("canvas");
      layer.width = WIDE;
      layer.height = H;
      return { ...spec, canvas: c, layer, top: 1, pen: {}, points: 0 };
    });
    this.series = null;
    this.w = WIDE;
    // drawn counts the points drawn since the charts were last reset,
    // added and drawn again: the work done, for the tests.
    this.drawn = 0;
  }

  // reset forgets the match shown.
  reset() {
    this.series = null;
  }

  // frame index under a click: the nearest frame by turn.
  click(c, e) {
    const s = this.series;
    if (!s || !s.count) return;
    const r = c.getBoundingClientRect();
    const turn = this.turnAt(((e.clientX - r.left) * c.width) / r.width);
    // The turns grow with the index: a binary search.
    let lo = 0, hi = s.count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((s.turns[mid] ?? -Infinity) < turn) lo = mid + 1;
      else hi = mid;
    }
    const near = lo > 0 && Math.abs(s.turns[lo - 1] - turn) <= Math.abs(s.turns[lo] - turn) ? lo - 1 : lo;
    this.onPick(near);
  }

  x(turn) {
    return M.left + ((this.w - M.left - M.right) * turn) / this.span;
  }

  turnAt(x) {
    return Math.round(((x - M.left) * this.span) / (this.w - M.left - M.right));
  }

  // update adds the frames not plotted yet and paints the charts with
  // frame index shown; done says no frame will follow (the turn axis
  // then ends at the last turn). which, when given, is the only chart
  // brought up to date (the others follow at their own call): a page
  // that has much to draw draws a chart an animation frame.
  update(frames, index, ids, game, done = false, which = null) {
    this.el.hidden = !frames.length;
    if (!frames.length) return;
    let s = this.series;
    if (!s || s.ids !== ids || s.game !== game || s.count > frames.length) {
      s = this.series = new Series(ids, game);
      this.span = 0;
      this.drawn = 0;
      this.most = 0; // the most points a call of extend drew
    }
    const from = s.count;
    for (let i = from; i < frames.length && frames[i]; i++) s.add(frames[i], i);
    const lastTurn = s.count ? s.turns[s.count - 1] || 0 : 0;
    // The turn axis: the last turn once it is known, else doubled as
    // the turns outgrow it.
    let span = this.span;
    if (done) span = Math.max(1, lastTurn);
    else if (lastTurn > span || !span) span = Math.max(64, span);
    while (!done && lastTurn > span) span *= 2;
    // As wide as the page has room for, up to WIDE: never scaled down.
    const w = Math.max(280, Math.min(WIDE, Math.floor(this.el.clientWidth) || WIDE));
    const rescaled = span !== this.span || w !== this.w || done !== this.done;
    this.done = done;
    if (w !== this.w) {
      this.w = w;
      for (const ch of this.charts) ch.canvas.width = ch.layer.width = w;
    }
    this.span = span;
    for (const ch of this.charts) {
      if (which != null && ch !== this.charts[which]) {
        if (rescaled) ch.drawnTo = 0; // redrawn at its own call
        continue;
      }
      // Each chart from the frame it was drawn to: one skipped at a call
      // (which) catches up at its own.
      if (rescaled || !ch.drawnTo || ch.drawnTo > s.count) this.redraw(ch);
      else if (ch.drawnTo < s.count) this.extend(ch, ch.drawnTo);
      this.paint(ch, index);
    }
    this.el.dataset.drawn = String(this.drawn);
    this.el.dataset.most = String(this.most);
    // The frames every chart shows (for the tests and the benchmark): a
    // chart to be drawn again (the match ended, rescaling the turn axis)
    // shows none until it is.
    this.el.dataset.frames = String(Math.min(...this.charts.map((ch) => ch.drawnTo || 0)));
    this.el.dataset.done = String(done); // the turn axis ends at the last turn
  }

  // current says whether every chart shows every frame added.
  current() {
    return !!this.series && this.charts.every((ch) => ch.drawnTo === this.series.count);
  }

  // largest is the largest value of a chart's lines from frame from on,
  // up to frame to when given (0 when none; the warm-up answers are not in
  // the series).
  largest(ch, from, to = Infinity) {
    let top = 0;
    for (const l of ch.lines)
      for (const seat of this.series[l.data])
        for (let i = from, end = Math.min(to, seat.length); i < end; i++) if (seat[i] != null && seat[i] > top) top = seat[i];
    return top;
  }

  // redraw draws a chart's lines afresh, the value axis' top the largest
  // value rounded up; grown says a value outgrew the top while frames
  // come, which leaves room above (1.5 times the largest value) for the
  // values to come.
  redraw(ch, grown = false) {
    const big = this.largest(ch, 0);
    ch.top = niceCeil(grown && !this.done ? Math.max(big * 1.5, ch.top) : big);
    const g = ch.layer.getContext("2d");
    const s = this.series;
    g.clearRect(0, 0, this.w, H);
    g.fillStyle = "#fff";
    g.fillRect(0, 0, this.w, H);
    g.strokeStyle = "#d9dde5";
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(M.left, M.top);
    g.lineTo(M.left, H - M.bottom);
    g.lineTo(this.w - M.right, H - M.bottom);
    g.stroke();
    g.fillStyle = "#374151";
    g.font = "12px sans-serif";
    g.textAlign = "left";
    g.textBaseline = "top";
    g.fillText(ch.title || s.scoreName, M.left, 3);
    g.font = "11px sans-serif";
    g.fillStyle = "#6b7280";
    g.textAlign = "right";
    g.textBaseline = "middle";
    g.fillText(fmt(ch.top), M.left - 4, M.top);
    g.fillText("0", M.left - 4, H - M.bottom);
    g.textBaseline = "top";
    g.fillText(`turn ${this.span}`, this.w - M.right, H - M.bottom + 4);
    g.textAlign = "left";
    g.fillText("turn 0", M.left, H - M.bottom + 4);
    if (ch.key === "time") {
      // The warm-up answers, off the scale: named in the corner.
      const w = s.warmUp.map((u, seat) => (u ? { ...u, seat } : null)).filter(Boolean);
      if (w.length) {
        const text = "warm-up: " + w.map((u) => fmt(u.ms) + " ms").join(", ");
        g.font = "12px sans-serif";
        const title = g.measureText(ch.title).width;
        g.font = "11px sans-serif";
        // Beside the title where there is room, else just under it.
        const beside = M.left + title + 12 + g.measureText(text).width <= this.w - M.right;
        g.textAlign = "right";
        g.fillStyle = "#6b7280";
        g.fillText(text, this.w - M.right, beside ? 3 : M.top + 2);
      }
    }
    ch.pen = {};
    ch.points = 0;
    ch.faults = 0;
    ch.drawnTo = 0;
    this.extend(ch, 0);
  }

  // extend draws a chart's points from frame from on, and the faults
  // not marked yet; a value over the chart's top draws it afresh.
  extend(ch, from) {
    const s = this.series;
    const to = Math.min(s.count, from + STEP);
    if (this.largest(ch, from, to) > ch.top) return this.redraw(ch, true);
    const g = ch.layer.getContext("2d");
    const was = this.drawn;
    const y = (v) => H - M.bottom - ((H - M.top - M.bottom) * v) / ch.top;
    for (; ch.faults < s.faults.length; ch.faults++) this.fault(g, s.faults[ch.faults]);
    g.lineWidth = 1.5;
    for (const l of ch.lines) {
      g.setLineDash(l.dash);
      s[l.data].forEach((vals, seat) => {
        const key = l.data + seat;
        let pen = ch.pen[key] || null;
        g.strokeStyle = seatColour(seat);
        g.beginPath();
        // One line through the points in a row, from the last drawn.
        let drew = false;
        let open = false;
        for (let i = from; i < to; i++) {
          const v = vals[i];
          if (v == null || s.turns[i] == null) {
            pen = null;
            open = false;
            continue;
          }
          const p = { x: this.x(s.turns[i]), y: y(v) };
          if (pen && !open) {
            g.moveTo(pen.x, pen.y);
            open = true;
          }
          if (open) {
            g.lineTo(p.x, p.y);
            drew = true;
          }
          pen = p;
          ch.points++;
          this.drawn++;
        }
        if (drew) g.stroke();
        ch.pen[key] = pen;
      });
    }
    g.setLineDash([]);
    this.most = Math.max(this.most, this.drawn - was);
    ch.drawnTo = to;
    ch.canvas.dataset.points = String(ch.points);
    ch.canvas.dataset.faults = s.faults.map((f) => `${f.seat}:${f.status}@${f.turn}`).join(" ");
  }

  // fault marks a fault on the turn axis: a red tick and the status.
  fault(g, f) {
    const x = this.x(f.turn);
    g.strokeStyle = "#b91c1c";
    g.lineWidth = 1;
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
    g.font = "11px sans-serif";
    g.textAlign = "left";
    g.textBaseline = "top";
    g.fillText(f.status, Math.min(x + 4, this.w - 60), M.top);
  }

  // paint shows a chart's lines and the turn shown.
  paint(ch, index) {
    const g = ch.canvas.getContext("2d");
    g.drawImage(ch.layer, 0, 0);
    const turn = this.series.turns[index];
    if (turn == null) return;
    const x = this.x(turn);
    g.strokeStyle = "rgba(31, 41, 55, .45)";
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(x, M.top);
    g.lineTo(x, H - M.bottom);
    g.stroke();
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
