// Contests (#/contests, #/contest/ID): the list and, for staff, a new
// contest; a contest's page with its rules and limits, a countdown to its
// deadline, its entries (enter a pushed bot, choose its final version,
// withdraw), the standings with their intervals and the head-to-head
// matrix, the exports, and for staff the audit log.
import { escapeHTML, localTime } from "./util.js";
import { api, onChange, isAdmin, owns, signedIn, current } from "./session.js";

const $ = (sel) => document.querySelector(sel);
const matchLink = (id, text) => `<a href="#/match/${encodeURIComponent(id)}">${escapeHTML(text || id)}</a>`;
const phases = { practice: "open for entries", freeze: "deadline passed: the final starts", final: "final being played", done: "done: standings final" };

// countdown says how long until t (a Date), in days, hours, minutes and
// seconds.
export function countdown(t, now) {
  let s = Math.max(0, Math.floor((t - now) / 1000));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return (d ? `${d}d ` : "") + `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}`;
}

// The settings a staff member gives a contest: the same fields in the
// new-contest form (ids contest-…) and the edit form (contest-edit-…).
const settings = [
  ["name", "Name", `<input id="ID" required size="18">`],
  ["maps", "Maps", `<input id="ID" placeholder="all of the game's" size="18">`],
  ["rounds", "Games per pairing and map", `<input id="ID" type="number" min="2" step="2" value="2" size="4">`],
  ["freeze", "Deadline", `<input id="ID" type="datetime-local" step="1" required>`],
  ["format", "Final", `<select id="ID"><option value="auto">a round robin, Swiss past 24 entries</option><option value="round-robin">a round robin</option><option value="swiss">a Swiss system</option></select>`],
  ["swiss", "Swiss rounds", `<input id="ID" type="number" min="0" placeholder="as the entries need" size="5">`],
  ["answer", "Answer time (ms)", `<input id="ID" type="number" min="0" placeholder="the game's" size="7">`],
  ["warmup", "Warm-up (ms)", `<input id="ID" type="number" min="0" placeholder="the game's" size="7">`],
  ["memory", "Memory (MiB)", `<input id="ID" type="number" min="0" placeholder="the platform's" size="7">`],
  ["entrants", "Who may enter", `<select id="ID"><option value="everyone">everyone signed in</option><option value="listed">the users and teams listed</option><option value="invite">the listed, and whoever has the invitation link</option></select>`],
  ["allowed", "Listed users and teams", `<input id="ID" placeholder="alice, team-red" size="18">`],
  ["perperson", "Entries per person", `<input id="ID" type="number" min="1" max="100" placeholder="1" size="4" title="how many entries may count for one person: a user's entry counts for the user, a team's for each of its members">`],
  ["tiebreak", "Tie-breaks", `<input id="ID" placeholder="head-to-head, sonneborn-berger" size="26" title="head-to-head, sonneborn-berger, rating; in order">`],
  ["rules", "Rules", `<textarea id="ID" rows="2" cols="40"></textarea>`],
];

const list = (v) => v.split(/[,\s]+/).filter(Boolean);
const num = (v) => (v === "" ? 0 : Number(v));

// settingsForm puts the settings' fields before a form's first child.
function settingsForm(form, prefix) {
  const html = settings.map(([k, label, input]) => `<label>${label} ${input.replace("ID", prefix + k)}</label>`).join("");
  form.firstElementChild.insertAdjacentHTML("beforebegin", html);
}

// readSettings is a form's settings as the API takes them; a field left
// empty is the default (on a new contest) or, on an edit, the default
// again.
function readSettings(prefix) {
  const v = (k) => $(`#${prefix}${k}`).value.trim();
  return {
    name: v("name"),
    maps: list(v("maps")),
    rounds: Number(v("rounds")) || 2,
    freeze_at: new Date(v("freeze")).toISOString(),
    format: v("format"),
    swiss_rounds: num(v("swiss")),
    answer_timeout_ms: num(v("answer")),
    warm_up_ms: num(v("warmup")),
    memory_mb: num(v("memory")),
    entrants: v("entrants"),
    allowed: list(v("allowed")),
    entries_per_person: num(v("perperson")),
    tiebreak: list(v("tiebreak")),
    rules: $(`#${prefix}rules`).value,
  };
}

// localInput is a time as a datetime-local input shows it.
const localInput = (t) => {
  const d = new Date(t);
  return new Date(d - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19);
};

function fillSettings(prefix, s) {
  const set = (k, v) => ($(`#${prefix}${k}`).value = v);
  set("name", s.name);
  set("maps", s.maps.join(", "));
  set("rounds", s.rounds);
  set("freeze", localInput(s.freeze_at));
  set("format", s.format);
  set("swiss", s.swiss_rounds || "");
  set("answer", s.answer_timeout_ms || "");
  set("warmup", s.warm_up_ms || "");
  set("memory", s.memory_mb || "");
  set("entrants", s.entrants);
  set("allowed", (s.allowed || []).join(", "));
  set("perperson", s.entries_per_person || "");
  set("tiebreak", s.tiebreak.join(", "));
  set("rules", s.rules || "");
}

export class ContestsView {
  constructor() {
    this.id = null;
    this.invite = "";
    this.edited = null;
    settingsForm($("#contest-form"), "contest-new-");
    settingsForm($("#contest-edit-form"), "contest-edit-");
    $("#contest-edit-form").addEventListener("submit", (e) =>
      this.staff(e, "PATCH", "", () => {
        const s = readSettings("contest-edit-");
        this.edited = null;
        return s;
      }),
    );
    $("#contest-class-filter").addEventListener("change", () => this.loadClass());
    $("#contest-similarity-run").addEventListener("click", () => this.loadSimilarity());
    $("#contest-gates-run").addEventListener("click", (e) => this.runGates(e));
    $("#contest-invite-renew").addEventListener("click", (e) => this.staff(e, "PATCH", "", () => ({ new_invite: true })));
    this.timer = null;
    this.tick = null;
    this.page = null;
    $("#contest-form").addEventListener("submit", (e) => this.create(e));
    $("#contest-enter").addEventListener("submit", (e) => this.enter(e));
    $("#contest-entries tbody").addEventListener("click", (e) => this.action(e));
    $("#contest-entries tbody").addEventListener("change", (e) => this.action(e));
    $("#contest-deadline-form").addEventListener("submit", (e) => this.staff(e, "PATCH", "", () => ({ freeze_at: new Date($("#contest-deadline").value).toISOString() })));
    $("#contest-rerun-form").addEventListener("submit", (e) => this.staff(e, "POST", "/rerun", () => ({ entries: [Number($("#contest-rerun-a").value), Number($("#contest-rerun-b").value)] })));
    $("#contest-clone-form").addEventListener("submit", (e) =>
      this.staff(e, "POST", "/clone", () => ({ name: $("#contest-clone-name").value, freeze_at: new Date($("#contest-clone-deadline").value).toISOString() }), (c) => (location.hash = `#/contest/${c.id}`)),
    );
    onChange(() => this.refresh());
  }

  // staff sends a staff action on the contest shown, then shows it again
  // (or what then says).
  async staff(e, method, path, body, then) {
    e.preventDefault();
    this.error(null);
    try {
      const out = await api(`/api/contests/${this.id}${path}`, { method, body: JSON.stringify(body()) });
      if (then) then(out);
      await this.refresh();
    } catch (err) {
      this.error(err);
    }
  }

  setGames(games) {
    $("#contest-game").replaceChildren(
      ...games.map((g) => {
        const o = document.createElement("option");
        o.value = o.textContent = g.name;
        return o;
      }),
    );
  }

  open(id, invite) {
    $("#contests").hidden = false;
    if (id !== this.id) this.edited = null;
    this.id = id;
    if (invite) {
      this.invite = invite;
      $("#contest-invite").value = invite;
    }
    $("#contests-list").hidden = id != null;
    $("#contest-view").hidden = id == null;
    clearInterval(this.timer);
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 3000);
  }

  close() {
    $("#contests").hidden = true;
    clearInterval(this.timer);
    clearInterval(this.tick);
    this.timer = this.tick = null;
    this.id = null;
  }

  error(e) {
    $("#contest-error").textContent = e ? e.message || String(e) : "";
  }

  async refresh() {
    if ($("#contests").hidden) return;
    try {
      if (this.id == null) await this.list();
      else await this.show();
    } catch (e) {
      this.error(e);
    }
  }

  async list() {
    $("#contest-create").hidden = !isAdmin();
    const list = await api("/api/contests");
    $("#contests-table tbody").replaceChildren(
      ...list.map((c) => {
        const tr = document.createElement("tr");
        tr.innerHTML = `<td><a href="#/contest/${c.id}">${escapeHTML(c.name)}</a></td><td>${escapeHTML(c.game)}</td><td>${escapeHTML(phases[c.phase] || c.phase)}</td><td>${escapeHTML(localTime(c.freeze_at))}</td>`;
        return tr;
      }),
    );
  }

  async create(e) {
    e.preventDefault();
    this.error(null);
    const spec = readSettings("contest-new-");
    spec.game = $("#contest-game").value;
    for (const k of ["maps", "allowed", "tiebreak"]) if (!spec[k].length) delete spec[k];
    try {
      const c = await api("/api/contests", { method: "POST", body: JSON.stringify(spec) });
      location.hash = `#/contest/${c.id}`;
    } catch (err) {
      this.error(err);
    }
  }

  async show() {
    const id = this.id;
    const [page, board] = await Promise.all([api(`/api/contests/${id}`), api(`/api/contests/${id}/standings`)]);
    if (id !== this.id) return;
    this.page = page;
    this.error(null);
    const s = page.spec;
    $("#contest-title").textContent = `${page.name} · ${page.game}`;
    $("#contest-phase").textContent = phases[page.phase] || page.phase;
    const lim = [
      `maps: ${s.maps.join(", ")}`,
      `${s.rounds} games per pairing and map, each seat order equally`,
      { "round-robin": "final: a round robin", swiss: `final: a Swiss system of ${s.swiss_rounds || "⌈log₂ n⌉ + 2"} rounds`, auto: "final: a round robin (a Swiss system past 24 entries)" }[s.format] || "",
      `answer time: ${s.answer_timeout_ms ? s.answer_timeout_ms + " ms" : "the game's"}`,
      `warm-up: ${s.warm_up_ms ? s.warm_up_ms + " ms" : "the game's"}`,
      `memory: ${s.memory_mb ? s.memory_mb + " MiB" : "the platform's"} per bot`,
      `entrants: ${s.entrants === "listed" ? s.allowed.join(", ") : s.entrants === "invite" ? "by invitation" + (s.allowed && s.allowed.length ? " and " + s.allowed.join(", ") : "") : "everyone signed in"}`,
      `${(s.entries_per_person || 1) === 1 ? "one entry" : s.entries_per_person + " entries"} per person (a team's entry counts for each of its members)`,
      `tie-breaks: ${s.tiebreak.join(", then ")}`,
      s.seed ? `seed: ${s.seed} (every final game's seed derives from it)` : "seed: published when the contest is done",
    ];
    $("#contest-limits").textContent = lim.join(" · ");
    $("#contest-rules").hidden = !s.rules;
    $("#contest-rules").textContent = s.rules || "";
    // The countdown runs on the server's clock.
    const skew = new Date(page.now) - Date.now();
    const freeze = new Date(page.freeze_at);
    clearInterval(this.tick);
    const tick = () => {
      $("#contest-countdown").textContent =
        page.phase === "practice" ? `deadline in ${countdown(freeze, Date.now() + skew)} (${localTime(freeze)})` : page.games ? `${page.played} / ${page.games} final games played` : "";
    };
    tick();
    this.tick = setInterval(tick, 1000);
    const me = current();
    $("#contest-enter").hidden = page.phase !== "practice" || !(signedIn() || me.mode === "local");
    $("#contest-invite").hidden = s.entrants !== "invite";
    $("#contest-invite-box").hidden = !s.invite;
    if (s.invite) $("#contest-invite-link").value = `${location.origin}/#/contest/${page.id}?invite=${encodeURIComponent(s.invite)}`;
    $("#contest-edit-box").hidden = !isAdmin() || page.phase !== "practice";
    // The edit form shows the settings as they are, until it is changed.
    if (isAdmin() && this.edited !== page.id && !$("#contest-edit-form").contains(document.activeElement)) {
      fillSettings("contest-edit-", s);
      this.edited = page.id;
    }
    const open = page.phase === "practice";
    $("#contest-entries tbody").replaceChildren(
      ...page.entries.map((e) => {
        const tr = document.createElement("tr");
        tr.dataset.id = e.id;
        let act = "";
        if (open && owns(e.owner) && e.state === "entered") {
          if (e.versions && e.versions.length) {
            const opts = [`<option value="">the latest ready</option>`, ...e.versions.map((v) => {
              const tag = v.split(" ")[0];
              return `<option value="${escapeHTML(tag)}"${tag === e.version ? " selected" : ""}>${escapeHTML(v)}</option>`;
            })];
            act += `<select class="version" aria-label="final version">${opts.join("")}</select> `;
          }
          act += `<button class="small withdraw" type="button">Withdraw</button>`;
        }
        if (isAdmin() && e.state !== "disqualified") act += ` <button class="small disqualify" type="button">Disqualify</button>`;
        if (signedIn() && e.state === "entered") act += ` <a class="challenge" href="#/challenges/new?contest=${page.id}&entry=${e.id}">Challenge</a>`;
        const fin = e.final || (e.version ? `${e.bot}:${e.version} (chosen)` : open ? "the latest ready at the deadline" : "");
        const warn = e.warning && open ? `<br><small class="bad entry-warning">${escapeHTML(e.warning)}</small>` : "";
        tr.innerHTML = `<td>${e.id}</td><td>${escapeHTML(e.bot)}${e.authors ? `<br><small class="hint">${escapeHTML(e.authors)}</small>` : ""}</td><td>${escapeHTML(e.owner)}</td><td>${escapeHTML(fin)}</td><td>${escapeHTML(e.state)}${e.reason ? `<br><small class="hint">${escapeHTML(e.reason)}</small>` : ""}${warn}</td><td>${act}</td>`;
        return tr;
      }),
    );
    this.standings(board);
    $("#contest-csv").href = `/api/contests/${id}/export?format=csv`;
    $("#contest-json").href = `/api/contests/${id}/export?format=json`;
    $("#contest-staff").hidden = !isAdmin();
    $("#contest-grades-csv").href = `/api/contests/${id}/grades?format=csv`;
    $("#contest-similarity-csv").href = `/api/contests/${id}/similarity?format=csv`;
    if (isAdmin()) this.loadClass();
    this.gates(page, board);
    const names = Object.fromEntries(page.entries.map((e) => [e.id, e.final || e.bot]));
    names[0] = "a bye";
    const swiss = board.games.some((g) => g.round > 0 || !g.second);
    $("#contest-games").innerHTML = board.games.length
      ? board.games
          .map((g) => {
            const text = `${swiss ? `round ${g.round + 1} · ` : ""}${names[g.first] || g.first} – ${names[g.second] || g.second} · ${g.map} · seed ${g.seed}${g.outcome ? " · " + g.outcome.split(":")[0] : " · " + g.state}`;
            return g.match_id ? matchLink(g.match_id, text) : escapeHTML(text);
          })
          .join("<br>")
      : "the final's games are made at the deadline";
    $("#contest-audit-box").hidden = !page.audit;
    if (page.audit) {
      $("#contest-audit tbody").replaceChildren(
        ...page.audit.map((a) => {
          const tr = document.createElement("tr");
          tr.innerHTML = `<td>${escapeHTML(localTime(a.at))}</td><td>${escapeHTML(a.actor)}</td><td>${escapeHTML(a.action)}</td><td>${escapeHTML(a.detail)}</td>`;
          return tr;
        }),
      );
    }
  }

  // loadSimilarity shows staff the final versions most alike, and a
  // pair's shared regions side by side.
  async loadSimilarity() {
    const id = this.id;
    $("#contest-similarity-note").textContent = "comparing…";
    $("#contest-similarity-pair").hidden = true;
    try {
      const rep = await api(`/api/contests/${id}/similarity`);
      if (id !== this.id) return;
      const skipped = rep.versions.filter((v) => !v.compared);
      $("#contest-similarity-note").textContent =
        rep.note + (skipped.length ? ` Not compared: ${skipped.map((v) => `${v.version} (${v.why})`).join("; ")}.` : "") + (rep.pairs.length ? "" : " No two share anything.");
      $("#contest-similarity tbody").replaceChildren(
        ...rep.pairs.map((p, i) => {
          const tr = document.createElement("tr");
          tr.innerHTML = `<td><meter min="0" max="1" value="${p.score}"></meter> ${p.score.toFixed(2)}</td><td>${escapeHTML(p.a)}</td><td>${escapeHTML(p.b)}</td><td>${p.shared} ${p.by === "image" ? "files" : "fingerprints"}</td><td><button class="small" type="button">Side by side</button></td>`;
          tr.querySelector("button").addEventListener("click", () => this.showPair(rep.pairs[i]));
          return tr;
        }),
      );
    } catch (e) {
      $("#contest-similarity-note").textContent = "";
      this.error(e);
    }
  }

  // showPair shows the regions two versions share, each side's lines
  // numbered.
  showPair(p) {
    const box = $("#contest-similarity-pair");
    if (p.by === "image") {
      box.innerHTML = `<div><h5>Files both images add (the same content)</h5><table><thead><tr><th>${escapeHTML(p.a)}</th><th>${escapeHTML(p.b)}</th></tr></thead><tbody>${p.files
        .map((f) => `<tr><td><code>${escapeHTML(f[0])}</code></td><td><code>${escapeHTML(f[1])}</code></td></tr>`)
        .join("")}</tbody></table></div>`;
      box.hidden = false;
      box.scrollIntoView({ block: "nearest" });
      return;
    }
    const side = (name, regions) =>
      `<div><h5>${escapeHTML(name)}</h5>${regions
        .map((r) => `<p class="hint">${escapeHTML(r.file)}, lines ${r.first}–${r.last}</p><pre>${r.lines.map((l, k) => `<span class="ln">${r.first + k}</span> ${escapeHTML(l)}`).join("\n")}</pre>`)
        .join("")}</div>`;
    box.innerHTML = side(p.a, p.regions_a) + side(p.b, p.regions_b);
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
  }

  // loadClass shows staff the class: who may enter, entered or not, and
  // whether what counts for them can play.
  async loadClass() {
    const id = this.id;
    const filter = $("#contest-class-filter").value;
    const q = filter ? `?filter=${encodeURIComponent(filter)}` : "";
    $("#contest-class-csv").href = `/api/contests/${id}/class${q ? q + "&" : "?"}format=csv`;
    try {
      const cls = await api(`/api/contests/${id}/class${q}`);
      if (id !== this.id) return;
      $("#contest-class-count").textContent = `${cls.rows.length} ${cls.rows.length === 1 ? "row" : "rows"}`;
      $("#contest-class tbody").replaceChildren(
        ...cls.rows.map((r) => {
          const tr = document.createElement("tr");
          tr.dataset.name = r.name;
          const who = `${escapeHTML(r.name)}${r.kind === "team" ? " <small class=\"hint\">(team)</small>" : ""}${r.teams && r.teams.length ? `<br><small class="hint">${escapeHTML(r.teams.join(", "))}</small>` : ""}`;
          const entry = r.entry ? `#${r.entry} ${escapeHTML(r.bot || "")}${r.entry_owner !== r.name ? ` <small class="hint">(${escapeHTML(r.entry_owner)}'s)</small>` : ""}` : '<span class="bad">not entered</span>';
          const check = !r.entry ? "" : r.ready ? `<span class="good">${escapeHTML(r.check || "ready")}</span>` : `<span class="bad">${escapeHTML(r.check || "nothing pushed")}</span>: no ready version`;
          const reason = r.reason && !r.ready ? `<br><small class="hint">${escapeHTML(r.reason)}</small>` : "";
          const practice = r.practice_rating != null ? `#${r.practice_rank} · ${r.practice_rating.toFixed(1)}` : "";
          tr.innerHTML = `<td>${who}</td><td>${escapeHTML(r.email || "")}</td><td>${entry}</td><td>${escapeHTML(r.version || "")}</td><td class="class-check">${check}${reason}</td><td>${r.pushed_at ? escapeHTML(localTime(r.pushed_at)) : ""}</td><td>${practice}</td>`;
          return tr;
        }),
      );
    } catch (e) {
      this.error(e);
    }
  }

  // gates shows the contest's gates and each entry's results, and offers
  // an entrant to play them on their newest ready version.
  gates(page, board) {
    const gates = page.spec.gates || [];
    $("#contest-gates-box").hidden = !gates.length;
    if (!gates.length) return;
    $("#contest-gates-spec").textContent = gates.map((g) => `${g.name}: ${g.wins} of ${g.games} games won against ${g.against} (maps: ${g.maps.join(", ")})`).join(" · ");
    const mine = page.entries.some((e) => e.state === "entered" && owns(e.owner));
    $("#contest-gates-run").hidden = page.phase !== "practice" || !mine;
    const bots = Object.fromEntries(page.entries.map((e) => [e.id, e.final || e.bot]));
    const rows = board.gates || [];
    $("#contest-gates tbody").replaceChildren(
      ...(rows.length ? rows : [null]).map((r) => {
        const tr = document.createElement("tr");
        if (!r) {
          tr.innerHTML = '<td colspan="5" class="hint">none played yet</td>';
          return tr;
        }
        const result = r.passed == null ? `${r.played} / ${r.games} played` : r.passed ? '<span class="good">passed</span>' : '<span class="bad">not passed</span>';
        const games = r.matches.slice(0, 10).map((m, i) => matchLink(m, String(i + 1))).join(" ");
        tr.innerHTML = `<td>${escapeHTML(bots[r.entry] || String(r.entry))}</td><td>${escapeHTML(r.gate)}</td><td>${r.kind === "final" ? "the final version" : "a request"}</td><td>${r.won} / ${r.games} <small>${games}</small></td><td>${result}</td>`;
        return tr;
      }),
    );
  }

  async runGates(e) {
    e.preventDefault();
    this.error(null);
    try {
      await api(`/api/contests/${this.id}/gates/run`, { method: "POST", body: "{}" });
      $("#contest-gates-status").textContent = "Asked: the games are queued; the results show below as they are played.";
      this.refresh();
    } catch (err) {
      this.error(err);
    }
  }

  standings(board) {
    $("#contest-standings-note").textContent = board.final ? "(final)" : board.games.length ? "(so far)" : "(after the deadline, from the final)";
    const names = board.rows.map((r) => r.name);
    $("#contest-standings tbody").replaceChildren(
      ...board.rows.map((r) => {
        const tr = document.createElement("tr");
        const faults = r.faults ? `${r.faults} <small>${r.fault_matches.slice(0, 5).map((m) => matchLink(m, "match")).join(" ")}</small>` : "0";
        tr.innerHTML = `<td>${r.rank || "—"}</td><td>${escapeHTML(r.name)}${r.disqualified ? " <small class=\"bad\">disqualified</small>" : ""}</td><td>${escapeHTML(r.owner)}</td><td>${r.points}</td><td>${r.played}</td><td>${r.wins} / ${r.draws} / ${r.losses}</td><td>${r.interval[0].toFixed(2)}–${r.interval[1].toFixed(2)}</td><td>${faults}</td>`;
        return tr;
      }),
    );
    $("#contest-practice tbody").replaceChildren(
      ...(board.practice.length ? board.practice : [null]).map((r) => {
        const tr = document.createElement("tr");
        tr.innerHTML = r
          ? `<td>${r.rank}</td><td>${escapeHTML(r.name)}</td><td>${escapeHTML(r.owner)}</td><td>${r.rating.toFixed(2)}</td><td>${r.played}</td><td>${r.wins} / ${r.draws} / ${r.losses}</td><td>${r.faults}</td>`
          : '<td colspan="7" class="hint">no practice match yet (it needs two entries with a ready version)</td>';
        return tr;
      }),
    );
    const byId = Object.fromEntries((this.page ? this.page.entries : []).map((e) => [e.id, e.bot]));
    $("#contest-practice-matches").innerHTML = board.practice_matches.length
      ? "Latest practice matches: " +
        board.practice_matches
          .slice(0, 10)
          .map((p) => matchLink(p.match_id, `${byId[p.first] || p.first} – ${byId[p.second] || p.second}${p.outcome ? " " + p.outcome.split(":")[0] : ""}`))
          .join(" · ")
      : "";
    const head = document.createElement("tr");
    head.innerHTML = `<th></th>` + names.map((n, i) => `<th title="${escapeHTML(n)}">${i + 1}</th>`).join("");
    $("#contest-h2h tbody").replaceChildren(
      head,
      ...board.head_to_head.map((row, i) => {
        const tr = document.createElement("tr");
        tr.innerHTML = `<th>${i + 1}. ${escapeHTML(names[i])}</th>` + row.map((v) => (v < 0 ? `<td class="self">—</td>` : `<td>${v}</td>`)).join("");
        return tr;
      }),
    );
  }

  async enter(e) {
    e.preventDefault();
    this.error(null);
    try {
      const body = { bot: $("#contest-bot").value.trim() };
      const invite = $("#contest-invite").value.trim();
      if (!$("#contest-invite").hidden && invite) body.invite = invite;
      await api(`/api/contests/${this.id}/entries`, { method: "POST", body: JSON.stringify(body) });
      $("#contest-bot").value = "";
      await this.refresh();
    } catch (err) {
      this.error(err);
    }
  }

  async action(e) {
    const tr = e.target.closest("tr");
    if (!tr) return;
    let body = null;
    if (e.type === "change" && e.target.classList.contains("version")) body = { version: e.target.value };
    else if (e.type === "click" && e.target.classList.contains("withdraw")) body = { withdraw: true };
    else if (e.type === "click" && e.target.classList.contains("disqualify")) {
      const why = prompt("Why is this entry disqualified?");
      if (!why) return;
      body = { disqualify: why };
    }
    if (!body) return;
    try {
      await api(`/api/contests/${this.id}/entries/${tr.dataset.id}`, { method: "PATCH", body: JSON.stringify(body) });
      await this.refresh();
    } catch (err) {
      this.error(err);
    }
  }
}
