// The ladders: a game's leaderboard (live, from the board's event stream),
// registration, and an entry's page with its rating plot (#/ladder/GAME,
// #/ladder/GAME/entry/ID).
import { escapeHTML, localTime } from "./util.js";
import { ImageSuggestions } from "./images.js";
import { api, onChange, canChange, signedIn } from "./session.js";

const $ = (sel) => document.querySelector(sel);

const fixed = (x, n = 2) => (typeof x === "number" ? x.toFixed(n) : "");
const matchLink = (id, text) => `<a href="#/match/${encodeURIComponent(id)}">${escapeHTML(text || id)}</a>`;

// percent shows a fault rate with a link to the latest such match.
function percent(r) {
  if (!r || !r.n) return '<span class="hint">0%</span>';
  return `<span class="bad">${r.percent.toFixed(0)}%</span> <small>${matchLink(r.latest_match, "latest")}</small>`;
}

function change(x) {
  if (typeof x !== "number" || x === 0) return "";
  return `<span class="${x > 0 ? "up" : "down"}">${x > 0 ? "+" : ""}${x.toFixed(2)}</span>`;
}

function players(seats, self) {
  return seats
    .map((s) => {
      const name = s.entry_id === self ? `<strong>${escapeHTML(s.name)}</strong>` : escapeHTML(s.name);
      const place = s.outcome ? ` <small>#${s.place + 1}${s.status && s.status !== "ok" ? " · " + escapeHTML(s.status) : ""}</small>` : "";
      return name + place;
    })
    .join(", ");
}

export class LadderView {
  constructor() {
    this.game = null;
    this.entry = null;
    this.source = null;
    this.entryTimer = null;
    this.images = new ImageSuggestions(api);
    $("#entry-form").addEventListener("submit", (e) => this.register(e));
    $("#ladder-game").addEventListener("change", () => (location.hash = `#/ladder/${$("#ladder-game").value}`));
    $("#leaderboard tbody").addEventListener("click", (e) => this.action(e));
    onChange((me) => this.who(me));
  }

  // who shows the registration to those who may register (everyone in
  // local mode, the signed-in in accounts mode), with a choice of owner
  // for members of teams.
  who(me) {
    const can = me.mode === "local" || !!me.user;
    $("#entry-form").hidden = !can;
    $("#entry-signin").hidden = can;
    const teams = me.user && me.mode === "accounts" ? me.user.teams : [];
    const sel = $("#entry-team");
    sel.hidden = !teams.length;
    sel.replaceChildren(
      ...[me.user ? me.user.name : "", ...teams].map((name, i) => {
        const o = document.createElement("option");
        o.value = i ? name : "";
        o.textContent = i ? `team ${name}` : `mine (${name})`;
        return o;
      }),
    );
    if (this.board) this.onBoard(this.board);
  }

  setGames(games) {
    $("#ladder-game").replaceChildren(
      ...games.map((g) => {
        const o = document.createElement("option");
        o.value = o.textContent = g.name;
        return o;
      }),
    );
  }

  // open shows a game's leaderboard, or one of its entries.
  open(game, entry) {
    $("#ladder").hidden = false;
    $("#ladder-game").value = game;
    $("#entry-back").href = `#/ladder/${encodeURIComponent(game)}`;
    $("#board-view").hidden = entry != null;
    $("#entry-view").hidden = entry == null;
    this.entry = entry;
    if (this.game !== game || !this.source) {
      this.stop();
      this.game = game;
      this.images.attach($("#entry-image"), game);
      this.source = new EventSource(`/api/ladders/${encodeURIComponent(game)}/stream`);
      this.source.addEventListener("board", (e) => this.onBoard(JSON.parse(e.data)));
      this.source.onerror = () => {
        if (this.source && this.source.readyState === EventSource.CLOSED) $("#ladder-status").textContent = "disconnected";
      };
    }
    if (entry != null) this.loadEntry();
  }

  close() {
    this.stop();
    this.game = null;
    $("#ladder").hidden = true;
  }

  stop() {
    if (this.source) this.source.close();
    this.source = null;
  }

  onBoard(b) {
    this.board = b;
    const st = $("#ladder-status");
    st.className = "status " + (b.running ? "running" : "");
    st.textContent = b.running ? "running" : "idle";
    $("#ladder-why").textContent = b.why || `Matchmaking plays the pairs whose order is least certain; ratings are μ − 3σ (Weng–Lin, Plackett–Luce).`;
    $("#ladder-count").textContent = `${b.rated} rated match${b.rated === 1 ? "" : "es"}` + (b.max_entries ? ` · at most ${b.max_entries} entries` : "");
    $("#leaderboard tbody").replaceChildren(...b.entries.map((e) => this.row(e)));
    $("#upcoming").replaceChildren(
      ...(b.upcoming.length ? b.upcoming : [null]).map((p) => {
        const li = document.createElement("li");
        if (!p) {
          li.innerHTML = '<span class="hint">nothing waiting</span>';
          return li;
        }
        const status = p.status ? `<span class="status ${escapeHTML(p.status)}">${escapeHTML(p.status)}${p.position ? " #" + p.position : ""}</span> ` : "";
        li.innerHTML = `${status}${matchLink(p.match_id)} · ${escapeHTML(p.map)}: ${p.entries.map(escapeHTML).join(" vs ")}<br><small class="hint">${escapeHTML(p.reason)}</small>`;
        return li;
      }),
    );
    $("#ladder-recent tbody").replaceChildren(
      ...b.recent.map((m) => {
        const tr = document.createElement("tr");
        const note = m.state === "void" ? `<span class="bad">void</span> <small>${escapeHTML(m.note || "")}</small>` : "";
        tr.innerHTML = `<td>${matchLink(m.match_id)}<br><small>${escapeHTML(m.map)}</small></td><td>${players(m.seats)}</td><td>${note}</td>`;
        return tr;
      }),
    );
    // An open entry page follows the board, at most once a second.
    if (this.entry != null && !this.entryTimer) {
      this.entryTimer = setTimeout(() => {
        this.entryTimer = null;
        if (this.entry != null) this.loadEntry();
      }, 1000);
    }
  }

  row(e) {
    const tr = document.createElement("tr");
    tr.dataset.id = e.id;
    tr.className = e.state;
    const href = `#/ladder/${encodeURIComponent(this.game)}/entry/${e.id}`;
    const note = e.state === "paused" ? ` <small>paused${e.note ? ": " + escapeHTML(e.note) : ""}</small>` : "";
    let buttons = canChange(e.owner)
      ? `<button type="button" class="small" data-act="${e.state === "paused" ? "resume" : "pause"}">${e.state === "paused" ? "Resume" : "Pause"}</button>
        <button type="button" class="small" data-act="remove">Remove</button>`
      : "";
    // Anyone signed in may challenge an active entry with a bot of theirs.
    if (signedIn() && e.state === "active") buttons += ` <a class="challenge" href="#/challenges/new?ladder=${encodeURIComponent(this.game)}&entry=${e.id}">Challenge</a>`;
    tr.innerHTML = `<td>${e.rank}</td>
      <td class="entry"><a href="${href}">${escapeHTML(e.name)}</a>${note}<br><small title="${escapeHTML(e.image_id)}">${escapeHTML(e.image)} · ${escapeHTML(e.image_id.slice(0, 19))}</small></td>
      <td class="owner">${escapeHTML(e.owner || "")}</td>
      <td><strong>${fixed(e.rating)}</strong></td><td>${fixed(e.mu)}</td><td>${fixed(e.sigma)}</td><td>${e.matches}</td>
      <td>${e.wins} / ${e.draws} / ${e.losses}</td>
      <td>${percent(e.faults.timeout)}</td><td>${percent(e.faults.crash)}</td><td>${percent(e.faults.bad_output)}</td>
      <td>${buttons}</td>`;
    return tr;
  }

  async action(ev) {
    const btn = ev.target.closest("button[data-act]");
    if (!btn) return;
    const id = btn.closest("tr").dataset.id;
    const path = `/api/ladders/${encodeURIComponent(this.game)}/entries/${id}`;
    $("#entry-error").textContent = "";
    try {
      if (btn.dataset.act === "remove") {
        if (!confirm("Take this entry off the ladder? Its matches stay in the history.")) return;
        await api(path, { method: "DELETE" });
      } else {
        await api(path, { method: "PATCH", body: JSON.stringify({ active: btn.dataset.act === "resume" }) });
      }
    } catch (e) {
      $("#entry-error").textContent = e.message;
    }
  }

  async register(ev) {
    ev.preventDefault();
    $("#entry-error").textContent = "";
    const body = { name: $("#entry-name").value.trim(), image: $("#entry-image").value.trim() };
    if ($("#entry-team").value) body.team = $("#entry-team").value;
    $("#register").disabled = true;
    try {
      const e = await api(`/api/ladders/${encodeURIComponent(this.game)}/entries`, { method: "POST", body: JSON.stringify(body) });
      $("#entry-name").value = "";
      $("#entry-image").value = "";
      $("#entry-error").textContent = "";
      $("#entry-error").dataset.last = e.id;
    } catch (e) {
      $("#entry-error").textContent = e.message;
    } finally {
      $("#register").disabled = false;
    }
  }

  async loadEntry() {
    const id = this.entry;
    let p;
    try {
      p = await api(`/api/ladders/${encodeURIComponent(this.game)}/entries/${id}?matches=50`);
    } catch (e) {
      $("#entry-title").textContent = e.message;
      return;
    }
    if (this.entry !== id) return;
    $("#entry-title").textContent = `#${p.rank} ${p.name}`;
    const versions = p.versions.length ? ` · other versions: ${p.versions.map((v) => `<a href="#/ladder/${encodeURIComponent(p.game)}/entry/${v.id}">v${v.version}</a> (${escapeHTML(v.state)})`).join(", ")}` : "";
    $("#entry-summary").innerHTML = (p.owner ? `owned by <strong>${escapeHTML(p.owner)}</strong> · ` : "") + `rating <strong>${fixed(p.rating)}</strong> (μ ${fixed(p.mu)}, σ ${fixed(p.sigma)}) · ${p.matches} rated matches: ${p.wins} won, ${p.draws} drawn, ${p.losses} lost · ${escapeHTML(p.state)}${p.note ? ": " + escapeHTML(p.note) : ""}<br><small>${escapeHTML(p.image)} · ${escapeHTML(p.image_id)}</small>${versions}`;
    plot($("#rating-plot"), p.history);
    $("#entry-faults tbody").replaceChildren(
      ...(p.fault_breakdown.length ? p.fault_breakdown : [null]).map((f) => {
        const tr = document.createElement("tr");
        tr.innerHTML = f ? `<td class="bad">${escapeHTML(f.status)}</td><td>${f.n}</td><td>${f.percent.toFixed(0)}%</td><td>${matchLink(f.latest_match)}${f.reason ? `<br><small class="reason">${escapeHTML(f.reason)}</small>` : ""}</td>` : '<td colspan="4" class="hint">no faults</td>';
        return tr;
      }),
    );
    $("#entry-opponents tbody").replaceChildren(
      ...p.opponents.map((o) => {
        const tr = document.createElement("tr");
        tr.innerHTML = `<td><a href="#/ladder/${encodeURIComponent(p.game)}/entry/${o.entry_id}">${escapeHTML(o.name)}</a></td><td>${o.matches}</td><td>${o.wins} / ${o.draws} / ${o.losses}</td>`;
        return tr;
      }),
    );
    $("#entry-matches tbody").replaceChildren(
      ...p.recent_matches.map((m) => {
        const tr = document.createElement("tr");
        tr.dataset.id = m.match_id;
        const place = m.state === "rated" ? `${m.place + 1} · ${escapeHTML(m.outcome)}` : m.state === "void" ? `<span class="bad">void</span> <small>${escapeHTML(m.note || "")}</small>` : "playing";
        tr.innerHTML = `<td>${matchLink(m.match_id)}<br><small>${escapeHTML(m.map)} · ${escapeHTML(localTime(m.created_at))}</small></td><td>${players(m.seats, p.id)}</td><td>${place}</td><td>${m.status && m.status !== "ok" ? `<span class="bad">${escapeHTML(m.status)}</span>` : escapeHTML(m.status || "")}</td><td>${change(m.change)}</td>`;
        return tr;
      }),
    );
  }
}

// plot draws the rating (μ − 3σ) after each match, with the band μ ± 3σ.
function plot(canvas, history) {
  const g = canvas.getContext("2d");
  const w = canvas.width;
  const h = canvas.height;
  const pad = { l: 44, r: 12, t: 12, b: 26 };
  g.fillStyle = "#fbfbf8";
  g.fillRect(0, 0, w, h);
  if (!history.length) return;
  const lo = Math.min(...history.map((p) => p.mu - 3 * p.sigma));
  const hi = Math.max(...history.map((p) => p.mu + 3 * p.sigma));
  const n = Math.max(1, history.length - 1);
  const x = (i) => pad.l + ((w - pad.l - pad.r) * i) / n;
  const y = (v) => h - pad.b - ((h - pad.t - pad.b) * (v - lo)) / Math.max(1e-9, hi - lo);
  // Axes, with a few round values.
  g.strokeStyle = "#d9dde5";
  g.fillStyle = "#6b7280";
  g.font = "10px sans-serif";
  g.textAlign = "right";
  g.textBaseline = "middle";
  const step = Math.pow(10, Math.floor(Math.log10(Math.max(1, hi - lo)))) * (hi - lo > 40 ? 2 : 1);
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
    g.beginPath();
    g.moveTo(pad.l, y(v));
    g.lineTo(w - pad.r, y(v));
    g.stroke();
    g.fillText(String(Math.round(v)), pad.l - 4, y(v));
  }
  g.textAlign = "center";
  g.textBaseline = "top";
  g.fillText("matches", (pad.l + w - pad.r) / 2, h - pad.b + 10);
  g.fillText(String(history.length - 1), x(n), h - pad.b + 4);
  g.fillText("0", x(0), h - pad.b + 4);
  // The band μ ± 3σ, then μ − 3σ.
  g.fillStyle = "rgba(37, 99, 235, 0.12)";
  g.beginPath();
  history.forEach((p, i) => g.lineTo(x(i), y(p.mu + 3 * p.sigma)));
  for (let i = history.length - 1; i >= 0; i--) g.lineTo(x(i), y(history[i].mu - 3 * history[i].sigma));
  g.closePath();
  g.fill();
  g.strokeStyle = "#2563eb";
  g.lineWidth = 2;
  g.beginPath();
  history.forEach((p, i) => (i ? g.lineTo(x(i), y(p.rating)) : g.moveTo(x(i), y(p.rating))));
  g.stroke();
  g.lineWidth = 1;
}
