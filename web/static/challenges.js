// Challenges (#/challenges): the visitor's challenges and those against
// their bots, the form that makes one (#/challenges/new?ladder=G&entry=ID,
// ?contest=C&entry=ID or ?bot=NAME, as the ladders' and contests'
// Challenge links open it), and a challenge's games and how they went
// (#/challenges/ID).
import { api } from "./session.js";
import { escapeHTML, localTime } from "./util.js";

const $ = (sel) => document.querySelector(sel);

function option(value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  return o;
}

export class ChallengesView {
  constructor() {
    this.games = [];
    this.opponent = null; // {ladder, entry} | {contest, entry} from a link
    this.timer = null;
    $("#challenge-form").addEventListener("submit", (e) => this.submit(e));
    $("#challenge-game").addEventListener("change", () => this.fillMaps());
    $("#challenge-opponent").addEventListener("input", () => {
      this.opponent = null;
      $("#challenge-ranked-row").hidden = true;
    });
  }

  setGames(games) {
    this.games = games;
    const keep = $("#challenge-game").value;
    $("#challenge-game").replaceChildren(...games.map((g) => option(g.name, g.title ? `${g.title} (${g.name})` : g.name)));
    if (games.some((g) => g.name === keep)) $("#challenge-game").value = keep;
    this.fillMaps();
  }

  fillMaps() {
    const g = this.games.find((x) => x.name === $("#challenge-game").value);
    const maps = g ? g.maps.filter((m) => m.min_players <= 2 && m.max_players >= 2) : [];
    $("#challenge-map").replaceChildren(option("", "each of the game's maps in turn"), ...maps.map((m) => option(m.name, m.name)));
  }

  // open shows the list (id null), the form with an opponent (id "new"),
  // or a challenge.
  open(id, query) {
    $("#challenges").hidden = false;
    clearTimeout(this.timer);
    $("#challenge-error").textContent = "";
    if (id && id !== "new") {
      $("#challenges-list").hidden = true;
      $("#challenge-view").hidden = false;
      return this.show(Number(id));
    }
    $("#challenges-list").hidden = false;
    $("#challenge-view").hidden = true;
    if (id === "new") this.prefill(new URLSearchParams(query || ""));
    this.list();
  }

  close() {
    clearTimeout(this.timer);
    $("#challenges").hidden = true;
  }

  // prefill names the opponent a link chose: a ladder or contest entry,
  // or a bot.
  async prefill(q) {
    this.opponent = null;
    $("#challenge-ranked-row").hidden = true;
    const entry = Number(q.get("entry"));
    try {
      if (q.get("ladder")) {
        const e = await api(`/api/ladders/${encodeURIComponent(q.get("ladder"))}/entries/${entry}`);
        this.opponent = { ladder: q.get("ladder"), entry };
        $("#challenge-opponent").value = `${e.name} (${e.owner}) on the ${q.get("ladder")} ladder`;
        $("#challenge-game").value = q.get("ladder");
        $("#challenge-ranked-row").hidden = false;
      } else if (q.get("contest")) {
        const c = await api(`/api/contests/${Number(q.get("contest"))}`);
        const e = (c.entries || []).find((x) => x.id === entry);
        this.opponent = { contest: Number(q.get("contest")), entry };
        $("#challenge-opponent").value = `${e ? e.bot + " (" + e.owner + ")" : "entry " + entry} in ${c.name}`;
        $("#challenge-game").value = c.game;
      } else if (q.get("bot")) {
        $("#challenge-opponent").value = q.get("bot");
      }
    } catch (e) {
      $("#challenge-error").textContent = e.message;
    }
    this.fillMaps();
    $("#challenge-bot").focus();
  }

  async submit(ev) {
    ev.preventDefault();
    $("#challenge-error").textContent = "";
    const opponent = this.opponent || { bot: $("#challenge-opponent").value.trim() };
    const body = { bot: $("#challenge-bot").value.trim(), opponent, games: Number($("#challenge-games").value) };
    if ($("#challenge-map").value) body.map = $("#challenge-map").value;
    if (this.opponent && this.opponent.ladder && $("#challenge-ranked").checked) body.ranked = true;
    try {
      const c = await api("/api/challenges", { method: "POST", body: JSON.stringify(body) });
      location.hash = `#/challenges/${c.id}`;
    } catch (e) {
      $("#challenge-error").textContent = e.message;
    }
  }

  async list() {
    try {
      const out = await api("/api/challenges?mine=1");
      $("#challenges-table tbody").replaceChildren(
        ...out.challenges.map((c) => {
          const tr = document.createElement("tr");
          tr.innerHTML = `<td><a href="#/challenges/${c.id}">#${c.id}</a> ${escapeHTML(c.game)}<br><small>${escapeHTML(localTime(c.created_at))} · by ${escapeHTML(c.created_by)}${c.ranked ? " · ranked" : ""}</small></td>
            <td>${escapeHTML(c.bot)}<br><small>vs ${escapeHTML(c.opponent_bot)}${c.opponent_owner ? " (" + escapeHTML(c.opponent_owner) + ")" : ""}</small></td>
            <td>${c.games}${c.pending ? ` <small>(${c.pending} to play)</small>` : ""}</td>
            <td>${c.wins} / ${c.draws} / ${c.losses}</td>
            <td>${points(c)}</td>`;
          return tr;
        }),
      );
    } catch (e) {
      $("#challenge-error").textContent = e.message;
    }
  }

  // show shows a challenge, again every 2 s while games are to play.
  async show(id) {
    try {
      const c = await api(`/api/challenges/${id}`);
      $("#challenge-title").textContent = `Challenge #${c.id}: ${c.bot} vs ${c.opponent_bot}`;
      $("#challenge-summary").innerHTML = `${escapeHTML(c.game)}, ${c.games} games${c.map ? " on " + escapeHTML(c.map) : ", each map in turn"}, seats swapped${c.ranked ? ", ranked" : ", unranked"}. ` +
        `<strong>${escapeHTML(c.bot)}: ${c.wins} won, ${c.draws} drawn, ${c.losses} lost</strong>` +
        (c.void ? `, ${c.void} void` : "") + (c.pending ? `, ${c.pending} to play` : "") + `. Points per game ${points(c)}.` +
        (c.note ? ` <span class="bad">${escapeHTML(c.note)}</span>` : "");
      $("#challenge-games tbody").replaceChildren(
        ...c.matches.map((g) => {
          const tr = document.createElement("tr");
          const outcome = g.void ? `<span class="bad">void</span> <small>${escapeHTML(g.void)}</small>` : escapeHTML(g.outcome || "");
          tr.innerHTML = `<td><a href="#/match/${encodeURIComponent(g.id)}">${g.idx + 1}</a></td><td>${escapeHTML(g.map)}</td><td>${escapeHTML(g.seed)}</td><td>${g.seat + 1}</td><td><span class="status ${escapeHTML(g.status)}">${escapeHTML(g.status)}${g.position ? " #" + g.position : ""}</span></td><td>${outcome}</td>`;
          return tr;
        }),
      );
      if (c.pending) this.timer = setTimeout(() => location.hash === `#/challenges/${id}` && this.show(id), 2000);
    } catch (e) {
      $("#challenge-error").textContent = e.message;
      $("#challenges-list").hidden = false;
    }
  }
}

// points is a challenge's points per game and its 95% interval.
function points(c) {
  if (!c.wins && !c.draws && !c.losses) return "–";
  return `${c.points.toFixed(2)} <small title="95% Wilson interval">[${c.interval[0].toFixed(2)}, ${c.interval[1].toFixed(2)}]</small>`;
}
