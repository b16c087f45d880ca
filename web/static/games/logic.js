// A game whose rules are a logic (a Saiblo logic image, registered by the
// operator): one generic view for all of them. Per round: what the logic
// delivered to each bot, whom it listened to, what each bot answered (or
// its fault), and what the logic showed spectators (its watch messages).
import { seatColour, shortId, room } from "./draw.js";

const LINE = 18; // pixels a line of text takes
const MAX_CHARS = 110; // of one line shown; the rest elided
const MAX_LINES = 4; // of one message shown

// lines cuts a message into at most MAX_LINES lines of MAX_CHARS.
function lines(text) {
  const all = String(text == null ? "" : text).replace(/\n$/, "").split("\n");
  const out = all.slice(0, MAX_LINES).map((l) => (l.length > MAX_CHARS ? l.slice(0, MAX_CHARS - 1) + "…" : l));
  if (all.length > MAX_LINES) out.push(`… ${all.length - MAX_LINES} more lines`);
  return out;
}

export const logic = {
  draw(canvas, frame, { ids = [] } = {}) {
    const st = (frame && frame.state) || {};
    const rows = []; // [colour, label, text]
    const listen = Array.isArray(st.listen) ? st.listen : [];
    rows.push(["#111827", "", `Round ${frame ? frame.turn : 0}` + (Number.isFinite(st.state) ? ` · state ${st.state}` : "") + (listen.length ? ` · listening to ${listen.map((s) => shortId(ids[s] || `seat ${s}`)).join(", ")}` : "")]);
    for (const m of Array.isArray(st.messages) ? st.messages : []) {
      lines(m.content).forEach((l, i) => rows.push([seatColour(m.to), i === 0 ? `→ ${shortId(ids[m.to] || `seat ${m.to}`, 14)}` : "", l]));
    }
    for (const b of (frame && Array.isArray(frame.bots) ? frame.bots : [])) {
      const what = b.fault ? `(${b.fault})` : b.answer != null ? b.answer : b.answer_b64 ? "(binary answer)" : "";
      if (what === "") continue;
      lines(what).forEach((l, i) => rows.push([seatColour(b.seat), i === 0 ? `← ${shortId(ids[b.seat] || `seat ${b.seat}`, 14)}` : "", l]));
    }
    for (const w of Array.isArray(st.watch) ? st.watch : []) {
      lines(w).forEach((l, i) => rows.push(["#6b7280", i === 0 ? "watch" : "", l]));
    }
    const r = room(canvas);
    canvas.width = Math.max(480, Math.min(1100, r.w));
    canvas.height = Math.max(120, 16 + rows.length * LINE);
    const g = canvas.getContext("2d");
    g.fillStyle = "#fbfbf8";
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.textBaseline = "top";
    rows.forEach(([colour, label, text], i) => {
      const y = 8 + i * LINE;
      g.font = i === 0 ? "bold 14px sans-serif" : "12px monospace";
      g.fillStyle = colour;
      g.fillText(label, 10, y);
      g.fillStyle = i === 0 ? colour : "#111827";
      g.fillText(text, i === 0 ? 10 : 150, y);
    });
  },
};
