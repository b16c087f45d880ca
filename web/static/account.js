// The account's views: sign in (#/signin), sign up (#/signup, or
// #/signup/CODE from an invitation link), setting one's password from the
// link an admin sent (#/password/CODE), the account (#/account: API
// tokens, teams, password), My bots (#/mybots: one's ladder entries and
// images) and, for admins, #/admin (invitations, the class roster and
// accounts, and the
// logic games registered; in local mode the games alone); and the
// header's account menu.
import { api, load, current, onChange, signedIn, isAdmin, working } from "./session.js";
import { escapeHTML, bytes, localTime } from "./util.js";
import { Uploader } from "./upload.js";

const $ = (sel) => document.querySelector(sel);
const views = ["#signin", "#signup", "#password", "#account", "#mybots", "#admin"];

function when(iso) {
  return iso ? localTime(iso) : "";
}

export class AccountView {
  // onGames is called once the games on offer changed (an admin
  // registered or removed one).
  constructor(games, onGames = () => {}) {
    this.games = games;
    this.onGames = onGames;
    this.uploader = new Uploader(games, () => this.loadRegistry());
    $("#signin-form").addEventListener("submit", (e) => this.signIn(e));
    $("#signup-form").addEventListener("submit", (e) => this.signUp(e));
    $("#setpw-form").addEventListener("submit", (e) => this.setPassword(e));
    $("#roster-form").addEventListener("submit", (e) => this.importRoster(e));
    $("#password-form").addEventListener("submit", (e) => this.changePassword(e));
    $("#token-form").addEventListener("submit", (e) => this.createToken(e));
    $("#team-form").addEventListener("submit", (e) => this.createTeam(e));
    $("#invite-make").addEventListener("click", () => this.createInvite());
    $("#game-form").addEventListener("submit", (e) => this.registerGame(e));
    $("#account-view").addEventListener("click", (e) => this.action(e));
    $("#admin").addEventListener("click", (e) => this.action(e));
    onChange((me) => this.header(me));
  }

  // header shows the mode, and who is signed in with their menu.
  header(me) {
    const box = $("#account-menu");
    if (me.mode === "local") {
      $("#mode").textContent = "local mode";
      $("#mode").title = "No accounts: every visitor of this page acts as the admin (ARENA_AUTH=local).";
      box.innerHTML = `<a href="#/admin">Admin</a>`;
      return;
    }
    $("#mode").textContent = "";
    if (!me.user) {
      box.innerHTML = `<a href="#/signin">Sign in</a>` + (me.signup !== "closed" ? ` <a href="#/signup">Sign up</a>` : "");
      return;
    }
    const invites = me.user.invitations.length ? ` <a href="#/account" class="badge" title="team invitations">${me.user.invitations.length}</a>` : "";
    box.innerHTML = `<a href="#/mybots">My bots</a> <a href="#/matches/mine" id="nav-mymatches">My matches</a>
      <a href="#/account" id="account-name">${escapeHTML(me.user.name)}</a>${invites}` +
      (isAdmin() ? ` <a href="#/admin">Admin</a>` : "") + ` <a href="#" id="signout">Sign out</a>`;
    $("#signout").addEventListener("click", (e) => this.signOut(e));
  }

  // open shows one of the views (name: signin, signup, account, mybots,
  // admin), or none.
  open(name, arg) {
    for (const v of views) $(v).hidden = v !== "#" + name;
    if (!name) return;
    for (const el of document.querySelectorAll(".form-error")) el.textContent = "";
    if (name === "signup") {
      if (arg) $("#signup-invite").value = arg;
      $("#signup-invite-row").hidden = current().signup !== "invite" && !arg;
    }
    if (name === "password") $("#setpw-link").value = arg || "";
    if (name === "account") this.loadAccount();
    if (name === "mybots") this.loadBots();
    if (name === "admin") this.loadAdmin();
  }

  async signIn(ev) {
    ev.preventDefault();
    const body = { name: $("#signin-name").value.trim(), password: $("#signin-password").value };
    try {
      await api("/api/session", { method: "POST", body: JSON.stringify(body) });
      $("#signin-password").value = "";
      await load();
      location.hash = "#/mybots";
    } catch (e) {
      $("#signin-error").textContent = e.message;
    }
  }

  async signUp(ev) {
    ev.preventDefault();
    const body = { name: $("#signup-name").value.trim(), password: $("#signup-password").value };
    const invite = $("#signup-invite").value.trim();
    if (invite) body.invite = invite;
    try {
      await api("/api/users", { method: "POST", body: JSON.stringify(body) });
      $("#signup-password").value = "";
      await load();
      location.hash = "#/mybots";
    } catch (e) {
      $("#signup-error").textContent = e.message;
    }
  }

  // setPassword sets the password of the account the link names, and
  // signs in as it.
  async setPassword(ev) {
    ev.preventDefault();
    const body = { link: $("#setpw-link").value, password: $("#setpw-password").value };
    try {
      await api("/api/users/password", { method: "POST", body: JSON.stringify(body) });
      $("#setpw-password").value = "";
      await load();
      location.hash = "#/mybots";
    } catch (e) {
      $("#setpw-error").textContent = e.message;
    }
  }

  // importRoster sends the roster chosen, and offers the links of the
  // accounts it made as a CSV to download (for a mail merge).
  async importRoster(ev) {
    ev.preventDefault();
    const file = $("#roster-file").files[0];
    const out = $("#roster-result");
    $("#admin-error").textContent = "";
    out.hidden = true;
    if (!file) return;
    const done = working();
    try {
      const res = await fetch("/api/users/import", { method: "POST", headers: { "Content-Type": "text/csv" }, body: await file.text() });
      const text = await res.text();
      if (!res.ok) {
        let msg = `${res.status} ${res.statusText}`;
        try {
          msg = JSON.parse(text).error || msg;
        } catch {}
        throw new Error(msg);
      }
      const made = text.trim().split("\n").length - 1;
      out.hidden = false;
      if (!made) {
        out.textContent = "Nothing to make: every account of the roster is here already.";
      } else {
        const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
        out.innerHTML = `${made} account${made === 1 ? "" : "s"} made. <a id="roster-links" href="${url}" download="arena-links.csv">Download their links</a> (a CSV of name,link: each link sets its account's password, once, within 14 days).`;
      }
      $("#roster-file").value = "";
      this.loadAdmin();
    } catch (e) {
      $("#admin-error").textContent = e.message;
    } finally {
      done();
    }
  }

  async signOut(ev) {
    ev.preventDefault();
    await api("/api/session", { method: "DELETE" }).catch(() => {});
    await load();
    location.hash = "#";
  }

  async changePassword(ev) {
    ev.preventDefault();
    const body = { old: $("#password-old").value, new: $("#password-new").value };
    try {
      await api("/api/me/password", { method: "PUT", body: JSON.stringify(body) });
      $("#password-old").value = $("#password-new").value = "";
      $("#password-error").textContent = "Changed: your other sessions are signed out.";
    } catch (e) {
      $("#password-error").textContent = e.message;
    }
  }

  async loadAccount() {
    if (!signedIn()) return;
    const me = current().user;
    $("#account-title").textContent = `${me.name} (${me.role})`;
    try {
      const [tokens, teams] = await Promise.all([api("/api/tokens"), api("/api/teams")]);
      $("#tokens tbody").replaceChildren(
        ...(tokens.tokens.length ? tokens.tokens : [null]).map((t) => {
          const tr = document.createElement("tr");
          tr.innerHTML = t
            ? `<td>${escapeHTML(t.name)}</td><td>${when(t.created_at)}</td><td>${t.last_used_at ? when(t.last_used_at) : '<span class="hint">never</span>'}</td>
               <td>${t.revoked_at ? `<span class="hint">revoked ${when(t.revoked_at)}</span>` : `<button type="button" class="small" data-act="revoke-token" data-id="${t.id}">Revoke</button>`}</td>`
            : '<td colspan="4" class="hint">no tokens</td>';
          return tr;
        }),
      );
      $("#teams").replaceChildren(
        ...teams.invitations.map((name) => {
          const li = document.createElement("li");
          li.innerHTML = `invited into <strong>${escapeHTML(name)}</strong> <button type="button" class="small" data-act="join" data-team="${escapeHTML(name)}">Join</button>
            <button type="button" class="small" data-act="decline" data-team="${escapeHTML(name)}">Decline</button>`;
          return li;
        }),
        ...teams.teams.map((t) => {
          const li = document.createElement("li");
          const members = t.members.map((m) => escapeHTML(m.user) + (m.state === "invited" ? " <small>(invited)</small>" : "")).join(", ");
          li.innerHTML = `<strong>${escapeHTML(t.name)}</strong>: ${members}
            <form class="inline-form" data-team="${escapeHTML(t.name)}"><input placeholder="invite a user by name" aria-label="user to invite into ${escapeHTML(t.name)}"><button type="submit" class="small">Invite</button>
            <button type="button" class="small" data-act="leave" data-team="${escapeHTML(t.name)}">Leave</button></form>`;
          li.querySelector("form").addEventListener("submit", (e) => this.invite(e));
          return li;
        }),
      );
    } catch (e) {
      $("#account-error").textContent = e.message;
    }
  }

  async createToken(ev) {
    ev.preventDefault();
    try {
      const t = await api("/api/tokens", { method: "POST", body: JSON.stringify({ name: $("#token-name").value.trim() }) });
      $("#token-name").value = "";
      $("#token-new").hidden = false;
      $("#token-value").textContent = t.token;
      this.loadAccount();
    } catch (e) {
      $("#account-error").textContent = e.message;
    }
  }

  async createTeam(ev) {
    ev.preventDefault();
    try {
      await api("/api/teams", { method: "POST", body: JSON.stringify({ name: $("#team-name").value.trim() }) });
      $("#team-name").value = "";
      await load();
      this.loadAccount();
    } catch (e) {
      $("#account-error").textContent = e.message;
    }
  }

  async invite(ev) {
    ev.preventDefault();
    const form = ev.target;
    try {
      await api(`/api/teams/${encodeURIComponent(form.dataset.team)}/members`, { method: "POST", body: JSON.stringify({ user: form.querySelector("input").value.trim() }) });
      this.loadAccount();
    } catch (e) {
      $("#account-error").textContent = e.message;
    }
  }

  // action runs a button of the account's or the admin's views.
  async action(ev) {
    const btn = ev.target.closest("button[data-act]");
    if (!btn) return;
    const me = current().user;
    const team = btn.dataset.team && encodeURIComponent(btn.dataset.team);
    try {
      switch (btn.dataset.act) {
        case "revoke-token":
          await api(`/api/tokens/${btn.dataset.id}`, { method: "DELETE" });
          break;
        case "join":
          await api(`/api/teams/${team}/join`, { method: "POST", body: "{}" });
          break;
        case "decline":
        case "leave":
          if (btn.dataset.act === "leave" && !confirm(`Leave team ${btn.dataset.team}?`)) return;
          await api(`/api/teams/${team}/members/${encodeURIComponent(me.name)}`, { method: "DELETE" });
          break;
        case "remove-game":
          return this.removeGame(btn.dataset.game);
        case "withdraw":
          await api(`/api/invites/${btn.dataset.id}`, { method: "DELETE" });
          return this.loadAdmin();
        case "password-link": {
          const r = await api(`/api/users/${encodeURIComponent(btn.dataset.user)}/password-link`, { method: "POST", body: "{}" });
          $("#password-link-user").textContent = r.name;
          $("#password-link").textContent = r.link;
          $("#password-link-new").hidden = false;
          return;
        }
        case "disable":
        case "enable":
          await api(`/api/users/${encodeURIComponent(btn.dataset.user)}`, { method: "PATCH", body: JSON.stringify({ disabled: btn.dataset.act === "disable" }) });
          return this.loadAdmin();
      }
      await load();
      this.loadAccount();
    } catch (e) {
      $("#account-error").textContent = $("#admin-error").textContent = e.message;
    }
  }

  // loadBots shows the visitor's ladder entries (theirs and their
  // teams') in every game, and the images they may play.
  async loadBots() {
    if (!signedIn()) {
      $("#mybots-entries tbody").innerHTML = '<tr><td class="hint">sign in to see your bots</td></tr>';
      return;
    }
    try {
      const boards = await Promise.all(this.games.map((g) => api(`/api/ladders/${encodeURIComponent(g.name)}`)));
      const rows = [];
      boards.forEach((b, i) => {
        for (const e of b.entries) {
          if (!current().user || !(e.owner === current().user.name || current().user.teams.includes(e.owner))) continue;
          const tr = document.createElement("tr");
          tr.dataset.id = e.id;
          tr.innerHTML = `<td>${escapeHTML(this.games[i].name)}</td><td><a href="#/ladder/${encodeURIComponent(this.games[i].name)}/entry/${e.id}">${escapeHTML(e.name)}</a>${e.state === "paused" ? " <small>paused</small>" : ""}</td>
            <td>${escapeHTML(e.owner)}</td><td><small>${escapeHTML(e.image)}</small></td><td>#${e.rank} · ${e.rating.toFixed(2)}</td><td>${e.wins} / ${e.draws} / ${e.losses}</td>`;
          rows.push(tr);
        }
      });
      if (!rows.length) {
        const tr = document.createElement("tr");
        tr.innerHTML = '<td colspan="6" class="hint">no ladder entries yet: register one on a ladder</td>';
        rows.push(tr);
      }
      $("#mybots-entries tbody").replaceChildren(...rows);
      await this.loadRegistry();
      const lists = await Promise.all(this.games.map((g) => api(`/api/images?game=${encodeURIComponent(g.name)}`)));
      // The versions pushed here are in the table above, with their checks.
      const seen = new Map();
      lists.forEach((l) => l.images.forEach((img) => !(this.pushed && this.pushed.has(img.image)) && seen.set(img.image, img)));
      $("#mybots-images").replaceChildren(
        ...[...seen.values()].map((img) => {
          const li = document.createElement("li");
          li.innerHTML = `<code>${escapeHTML(img.image)}</code> <small class="hint">${escapeHTML(img.id.replace(/^sha256:/, "").slice(0, 12))}${img.game ? " · " + escapeHTML(img.game) : ""}</small>`;
          return li;
        }),
      );
    } catch (e) {
      $("#mybots-error").textContent = e.message;
    }
  }

  // loadRegistry shows the visitor's images pushed to the server's
  // registry, with the commands that push one.
  async loadRegistry() {
    let reg;
    try {
      reg = await api("/api/registry");
    } catch (e) {
      $("#mybots-registry").hidden = true; // no registry here
      return;
    }
    $("#mybots-registry").hidden = false;
    // While a version's check is pending (or an upload's not listed yet),
    // the table is read again.
    this.uploader.checked(reg);
    clearTimeout(this.registryTimer);
    if (this.uploader.following || reg.images.some((img) => !["ready", "rejected"].includes(img.state)))
      this.registryTimer = setTimeout(() => !$("#mybots").hidden && this.loadRegistry(), 2000);
    this.pushed = new Set(reg.images.map((img) => `${img.repository}:${img.tag}`));
    $("#registry-commands").textContent = reg.commands.join("\n");
    $("#registry-images tbody").replaceChildren(
      ...(reg.images.length ? reg.images : [null]).map((img) => {
        const tr = document.createElement("tr");
        if (!img) {
          tr.innerHTML = '<td colspan="8" class="hint">nothing pushed yet</td>';
          return tr;
        }
        tr.innerHTML = `<td><code>${escapeHTML(img.reference)}</code></td><td><small title="${escapeHTML(img.digest)}">${escapeHTML(img.digest.slice(7, 19))}</small></td>
          <td>${bytes(img.size)}</td><td>${when(img.pushed_at)} <small>by ${escapeHTML(img.pushed_by)}</small></td><td>${escapeHTML(img.game || "")}</td><td>${escapeHTML(img.authors || "")}</td>
          <td class="check-state">${checkCell(img)}</td>
          <td><button type="button" class="small" data-repo="${escapeHTML(img.repository)}">Delete repository</button></td>`;
        return tr;
      }),
    );
    for (const btn of document.querySelectorAll("#registry-images button[data-repo]")) {
      btn.addEventListener("click", async () => {
        if (!confirm(`Delete ${btn.dataset.repo} and every tag of it from the registry? Ladder entries of it keep their pinned image.`)) return;
        try {
          await api(`/api/registry/repositories/${btn.dataset.repo.split("/").map(encodeURIComponent).join("/")}`, { method: "DELETE" });
          this.loadBots();
        } catch (e) {
          $("#mybots-error").textContent = e.message;
        }
      });
    }
    $("#registry-usage").textContent = Object.entries(reg.usage)
      .map(([o, u]) => `${o}: ${u.repositories}${u.max_repositories ? "/" + u.max_repositories : ""} repositories, ${u.tags}${u.max_tags ? "/" + u.max_tags : ""} tags, ${bytes(u.bytes)}${u.max_bytes ? " of " + bytes(u.max_bytes) : ""}`)
      .join(" · ");
  }

  async createInvite() {
    try {
      const inv = await api("/api/invites", { method: "POST", body: "{}" });
      $("#invite-new").hidden = false;
      $("#invite-link").textContent = inv.link;
      this.loadAdmin();
    } catch (e) {
      $("#admin-error").textContent = e.message;
    }
  }

  // setGames takes the games on offer now.
  setGames(games) {
    this.games = games;
    this.uploader.setGames(games);
  }

  async registerGame(ev) {
    ev.preventDefault();
    const body = { name: $("#game-name").value.trim(), image: $("#game-image").value.trim() };
    // The logic's own limits, where the admin gives them.
    const limits = {};
    const number = (id, scale, key) => {
      const v = $(id).value.trim();
      if (v !== "") limits[key] = Number(v) * scale;
    };
    number("#game-round-ms", 1, "round_ms");
    number("#game-memory-mib", 1 << 20, "memory_bytes");
    number("#game-cpus", 1, "cpus");
    number("#game-message-kib", 1 << 10, "message_bytes");
    if (Object.keys(limits).length) body.limits = limits;
    $("#admin-error").textContent = "";
    try {
      // It may take seconds: the image is checked (session.js' working
      // marks the button busy).
      $("#game-register").textContent = "Registering: checking its image…";
      try {
        await api("/api/games", { method: "POST", body: JSON.stringify(body) });
      } finally {
        $("#game-register").textContent = "Register";
      }
      for (const id of ["#game-name", "#game-image", "#game-round-ms", "#game-memory-mib", "#game-cpus", "#game-message-kib"]) $(id).value = "";
      $("#admin-error").textContent = "";
      await this.onGames();
    } catch (e) {
      $("#admin-error").textContent = e.message;
    }
    this.loadGames();
  }

  async removeGame(name) {
    if (!confirm(`Remove the game ${name}? Its matches and replays stay; its ladder board is hidden until a game of this name is registered again; no new match of it starts.`)) return;
    $("#admin-error").textContent = "";
    try {
      await api(`/api/games/${encodeURIComponent(name)}`, { method: "DELETE" });
      await this.onGames();
    } catch (e) {
      $("#admin-error").textContent = e.message;
    }
    this.loadGames();
  }

  // loadGames lists the logic games registered here, and names the
  // server's own.
  async loadGames() {
    try {
      const registered = await api("/api/games/registered");
      const mine = new Set(registered.map((g) => g.name));
      $("#logic-games tbody").replaceChildren(
        ...registered.map((g) => {
          const tr = document.createElement("tr");
          const state = g.offered ? '<span class="good">on offer</span>' : `<span class="bad">not offered</span>: ${escapeHTML(g.problem || "")}`;
          tr.innerHTML = `<td>${g.offered ? `<a href="#/ladder/${encodeURIComponent(g.name)}">${escapeHTML(g.title ? `${g.title} (${g.name})` : g.name)}</a>` : escapeHTML(g.name)}</td>
            <td><code>${escapeHTML(g.image)}</code></td><td>${g.players || ""}</td><td class="limits">${limitsText(g)}</td><td>${escapeHTML(g.added_by)} · ${when(g.added_at)}</td><td>${state}</td>
            <td><button type="button" class="small" data-act="remove-game" data-game="${escapeHTML(g.name)}">Remove</button></td>`;
          return tr;
        }),
      );
      if (!registered.length) $("#logic-games tbody").innerHTML = '<tr><td colspan="7" class="hint">none registered here yet</td></tr>';
      const own = this.games.filter((g) => !mine.has(g.name)).map((g) => g.name);
      $("#logic-games-fixed").textContent = own.length ? `The server's own games (built in, or set by ARENA_GAMES; not removed here): ${own.join(", ")}.` : "";
    } catch (e) {
      $("#admin-error").textContent = e.message;
    }
  }

  // loadDisk says what the data folder holds.
  async loadDisk() {
    try {
      const d = await api("/api/disk");
      const mib = (n) => `${(n / 1048576).toFixed(1)} MiB`;
      $("#disk").textContent =
        `Replays ${mib(d.replays_bytes)} (${d.replay_files} files; ladder, practice, check and challenge replays kept ${d.keep_replays}) · ` +
        `database ${mib(d.database_bytes)} · registry ${mib(d.registry_bytes)}`;
    } catch (e) {
      $("#disk").textContent = e.message;
    }
  }

  async loadAdmin() {
    if (!isAdmin()) return;
    this.loadGames();
    this.loadDisk();
    $("#admin-accounts").hidden = current().mode !== "accounts";
    if (current().mode !== "accounts") return;
    try {
      const [invites, users] = await Promise.all([api("/api/invites"), api("/api/users")]);
      $("#invites tbody").replaceChildren(
        ...invites.invites.map((inv) => {
          const tr = document.createElement("tr");
          const state = inv.used_by ? `used by ${escapeHTML(inv.used_by)}` : new Date(inv.expires_at) < new Date() ? "expired" : `open until ${when(inv.expires_at)}`;
          tr.innerHTML = `<td>${inv.id}</td><td>${escapeHTML(inv.created_by)} · ${when(inv.created_at)}</td><td>${state}</td>
            <td>${inv.used_by ? "" : `<button type="button" class="small" data-act="withdraw" data-id="${inv.id}">Withdraw</button>`}</td>`;
          return tr;
        }),
      );
      $("#users tbody").replaceChildren(
        ...users.users.map((u) => {
          const tr = document.createElement("tr");
          const act =
            u.name === "admin"
              ? ""
              : `<button type="button" class="small" data-act="${u.disabled ? "enable" : "disable"}" data-user="${escapeHTML(u.name)}">${u.disabled ? "Enable" : "Disable"}</button>
                 <button type="button" class="small" data-act="password-link" data-user="${escapeHTML(u.name)}" title="a new link that sets the password (the last one stops working)">Password link</button>`;
          tr.innerHTML = `<td>${escapeHTML(u.name)}</td><td>${escapeHTML(u.email || "")}</td><td>${escapeHTML(u.role)}${u.disabled ? ' · <span class="bad">disabled</span>' : ""}</td><td>${when(u.created_at)}</td><td>${act}</td>`;
          return tr;
        }),
      );
    } catch (e) {
      $("#admin-error").textContent = e.message;
    }
  }
}

// limitsText is a registered game's logic limits as they apply (its own
// marked), and those its image's labels propose, for the admin to decide.
function limitsText(g) {
  const text = (l) =>
    [
      l.round_ms && `${l.round_ms / 1000} s a round`,
      l.memory_bytes && `${Math.round(l.memory_bytes / (1 << 20))} MiB`,
      l.cpus && `${l.cpus} CPU`,
      l.message_bytes && `${Math.round(l.message_bytes / 1024)} KiB a message`,
    ]
      .filter(Boolean)
      .join(" · ");
  const own = Object.keys(g.limits || {}).length ? " <small>(its own where set)</small>" : " <small>(the server's)</small>";
  let html = g.effective_limits ? escapeHTML(text(g.effective_limits)) + own : "";
  if (g.proposed_limits) html += `<br><small class="hint">its image proposes: ${escapeHTML(text(g.proposed_limits))}</small>`;
  return html;
}

// checkCell is a pushed version's check: its state, a link to its check
// match, and for a rejected one the reason and the bot's stderr.
function checkCell(img) {
  const state = img.state || "pending";
  let html = `<span class="state state-${escapeHTML(state)}">${escapeHTML(state)}</span>`;
  if (img.check_match) html += ` <a href="#/match/${encodeURIComponent(img.check_match)}"><small>check match</small></a>`;
  if (img.reason) html += `<br><small class="check-reason">${escapeHTML(img.reason)}</small>`;
  if (img.stderr) html += `<details><summary><small>stderr</small></summary><pre class="check-stderr">${escapeHTML(img.stderr)}</pre></details>`;
  return html;
}
