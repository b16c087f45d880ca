// The page: the new-match form, the history, and routing between them,
// the viewer (#/match/ID), the ladders (#/ladder/GAME,
// #/ladder/GAME/entry/ID), the account's views (account.js) and the
// editor (#/editor, #/editor/ID: editor.js).
import { Viewer } from "./viewer.js";
import { escapeHTML, botIds, localTime } from "./util.js";
import { ImageSuggestions } from "./images.js";
import { api, current, load, onChange, signedIn } from "./session.js";

const $ = (sel) => document.querySelector(sel);
let games = [];
let nextCursor = null;
const viewer = new Viewer({
  onChange: () => loadHistory(),
});
const images = new ImageSuggestions(api);
// The other views are made once their modules are loaded (views): after
// a match's first board, on a match's page.
let ladders = null;
let contests = null;
let challenges = null;
let account = null;
let notifications = null;
// The editor's view (editor.js), made when an editor route is first
// opened: its module and CodeMirror load then, never with the others.
let editor = null;
let editorLoaded = null;

// views loads the modules of the views other than the viewer's (and
// upload.js, account.js's, at the same time); they are not in
// index.html's modulepreload list, so that a match's page fetches and
// runs them after its first board, not before it.
const views = () => Promise.all([import("./ladder.js"), import("./contests.js"), import("./challenges.js"), import("./account.js"), import("./notify.js"), import("./upload.js")]);

function option(value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  return o;
}

// offerGames fills every list of games on the page with the games on
// offer (they change when an admin registers or removes a logic game).
function offerGames(list) {
  games = list;
  // A logic game may have a title of its own (io.arena.title).
  const label = (g) => (g.title ? `${g.title} (${g.name})` : g.name);
  const keep = (sel) => {
    const v = $(sel).value;
    return () => {
      if ([...$(sel).options].some((o) => o.value === v)) $(sel).value = v;
    };
  };
  const game = keep("#game"), history = keep("#history-game");
  $("#game").replaceChildren(...games.map((g) => option(g.name, label(g))));
  $("#history-game").replaceChildren(option("", "every game"), ...games.map((g) => option(g.name, label(g))));
  game();
  history();
  ladders.setGames(games);
  contests.setGames(games);
  challenges.setGames(games);
  if (account) account.setGames(games);
  if (editor) editor.setGames(games);
  // Which games ship a player of their own.
  viewer.setGames(games);
}

function currentGame() {
  return games.find((g) => g.name === $("#game").value);
}

function currentMap() {
  const g = currentGame();
  return g && g.maps.find((m) => m.name === $("#map").value);
}

function fillMaps() {
  const g = currentGame();
  // A logic game's maps have no size the platform knows of.
  const size = (m) => (m.width && m.height ? `${m.width}×${m.height}, ` : "");
  $("#map").replaceChildren(...g.maps.map((m) => option(m.name, `${m.name} (${size(m)}${m.min_players === m.max_players ? m.max_players : m.min_players + "–" + m.max_players} bots)`)));
  fillBots();
}

// typed keeps, per game, what the user typed in each bot field, so that
// switching games shows each game's own bots: a field nobody typed in
// holds the game's example bot.
const typed = {};

// One image field per player of the chosen map, pre-filled with the
// game's example bots (or what was typed for this game); fields beyond
// the map's minimum may be left empty. Each field suggests the local
// images that play the game (images.js).
function fillBots() {
  const g = currentGame();
  const m = currentMap();
  const mine = (typed[g.name] ||= []);
  const fields = [];
  for (let i = 0; i < m.max_players; i++) {
    const def = g.default_bots.length ? g.default_bots[i % g.default_bots.length].image : "";
    const label = document.createElement("label");
    label.textContent = `Bot ${i + 1}` + (i >= m.min_players ? " (optional)" : "");
    const input = document.createElement("input");
    input.name = `bot${i}`;
    input.className = "bot";
    input.placeholder = "image name, e.g. my_name/mega_destructor";
    input.value = mine[i] !== undefined ? mine[i] : def;
    input.addEventListener("input", () => (mine[i] = input.value));
    images.attach(input, g.name);
    label.append(input);
    fields.push(label);
  }
  $("#bot-fields").replaceChildren(...fields);
  // The seat the visitor may play themselves: any of the map's first
  // seats (a match needs its minimum of bots).
  const seat = $("#my-seat").value;
  $("#my-seat").replaceChildren(...Array.from({ length: m.min_players }, (_, i) => option(String(i), `bot ${i + 1}` + (g.name === "pacman" ? (i === 0 ? " (the Pac-Man)" : " (the ghosts)") : ""))));
  if ([...$("#my-seat").options].some((o) => o.value === seat)) $("#my-seat").value = seat;
  markMySeat();
}

// markMySeat shows which bot field the visitor plays instead of a bot.
function markMySeat() {
  const mine = $("#play-myself").checked ? Number($("#my-seat").value) : -1;
  document.querySelectorAll("#bot-fields input").forEach((input, i) => {
    input.disabled = i === mine;
    input.closest("label").classList.toggle("you", i === mine);
  });
}

async function start(ev) {
  ev.preventDefault();
  $("#form-error").textContent = "";
  // A seat the visitor plays is {"human": true}; empty optional fields
  // are left out.
  const mine = $("#play-myself").checked ? Number($("#my-seat").value) : -1;
  const bots = [...document.querySelectorAll("#bot-fields input")].map((input, i) => (i === mine ? { human: true } : input.value.trim())).filter((v) => v !== "");
  const body = { game: $("#game").value, map: $("#map").value, bots };
  const seed = $("#seed").value.trim();
  if (seed !== "") {
    if (!/^\d+$/.test(seed)) {
      $("#form-error").textContent = "seed must be a whole number from 0 to 18446744073709551615";
      return;
    }
    // As a string: JavaScript's numbers are exact only up to 2^53.
    body.seed = seed;
  }
  $("#start").disabled = true;
  try {
    const m = await api("/api/matches", { method: "POST", body: JSON.stringify(body) });
    location.hash = `#/match/${m.id}`;
    // A bot labelled for another game plays, warned of.
    $("#form-error").textContent = (m.warnings || []).join("; ");
    loadHistory();
  } catch (e) {
    $("#form-error").textContent = e.message;
  } finally {
    $("#start").disabled = false;
  }
}

// names are the bots as the history shows them: a ladder's match names
// its entries instead of their images.
function names(m) {
  const ids = botIds(m.bots);
  return ids.map((id, seat) => (m.ladder && m.ladder[seat] ? m.ladder[seat].name : id));
}

function winnerText(m) {
  if (m.status !== "finished" || !m.result) return m.error ? m.error.slice(0, 60) : "";
  const ids = botIds(m.bots);
  const shown = names(m);
  const w = m.result.winners;
  if (!w.length || (m.result.bots.length > 1 && w.length === m.result.bots.length)) return "draw";
  return (w.length > 1 ? "shared: " : "") + w.map((x) => (ids.includes(x) ? shown[ids.indexOf(x)] : x)).join(", ");
}

// breakable lets an image name wrap after its slashes and colons, not
// in the middle of a word.
const breakable = (name) => escapeHTML(name).replace(/([/:])/g, "$1<wbr>");

// faultsText says which bots faulted, how and when ("crashed at 3"),
// in a finished match.
function faultsText(m) {
  if (!m.result || !m.result.bots) return "";
  const shown = names(m);
  return m.result.bots
    .filter((b) => b.status && b.status !== "ok")
    .map((b) => `${shown[b.seat] ?? b.id} ${b.status}` + (b.fault_turn ? ` at ${b.fault_turn}` : ""))
    .join("; ");
}

// A row of the History: a link to the match (a new tab, the keyboard),
// and what happened, faults first.
function historyRow(m) {
  const tr = document.createElement("tr");
  tr.dataset.id = m.id;
  rowOf.set(tr, JSON.stringify(m));
  const when = localTime(m.created_at);
  const faults = faultsText(m);
  if (faults || m.status === "failed") tr.classList.add("faulted");
  const cells = [
    `<a class="match" href="#/match/${encodeURIComponent(m.id)}">` + escapeHTML(`${m.game} · ${m.map}`) + "</a>" + (m.ladder ? " · ladder" : "") + `<br><small>${escapeHTML(when)}</small>`,
    names(m).map(breakable).join("<br>"),
    `<span class="status ${m.status}">${m.status}${m.position ? " #" + m.position : ""}</span>`,
    breakable(winnerText(m)) + (faults ? `<br><small class="fault" title="a bot faulted">⚠ ${breakable(faults)}</small>` : ""),
  ];
  for (const html of cells) {
    const td = document.createElement("td");
    td.innerHTML = html;
    tr.append(td);
  }
  tr.addEventListener("click", (e) => {
    if (!e.target.closest("a")) location.hash = `#/match/${m.id}`;
  });
  return tr;
}

// rowOf is the match (its JSON) each history row shows.
const rowOf = new WeakMap();

// showHistory shows matches in the history (then the rows older, kept
// as they are). A match that has not changed keeps its row, and an
// unchanged list is left alone: the history is read again every few
// seconds, and each row made anew is laid out anew, work that would
// take the page's time from a match being watched beside it.
function showHistory(matches, older = []) {
  const body = $("#history tbody");
  const had = new Map([...body.children].map((tr) => [rowOf.get(tr), tr]));
  const rows = matches.map((m) => had.get(JSON.stringify(m)) || historyRow(m)).concat(older);
  if (rows.length === body.children.length && rows.every((tr, i) => tr === body.children[i])) return;
  body.replaceChildren(...rows);
}

// historyQuery is the history's filters as a query string.
function historyQuery(more, limit) {
  const q = new URLSearchParams();
  if (more && nextCursor) q.set("before", nextCursor);
  if (limit) q.set("limit", String(limit));
  if ($("#history-mine").checked && signedIn()) q.set("mine", "1");
  if ($("#history-hide-ladder").checked) q.set("ladder", "0");
  if ($("#history-game").value) q.set("game", $("#history-game").value);
  return q.toString() ? "?" + q : "";
}

async function loadHistory(more = false) {
  try {
    const page = await api("/api/matches" + historyQuery(more));
    if (more) $("#history tbody").append(...page.matches.map(historyRow));
    else showHistory(page.matches);
    nextCursor = page.next;
    $("#more").hidden = !page.next;
  } catch (e) {
    console.error("history:", e);
  }
}

// refreshHistory brings the history up to date every few seconds and
// keeps its place: the pages of older matches the visitor opened stay
// (the first 100 rows are read again, the older ones kept as they are).
async function refreshHistory() {
  const body = $("#history tbody");
  const shown = body.children.length;
  try {
    const page = await api("/api/matches" + historyQuery(false, Math.min(100, Math.max(20, shown))));
    if (shown <= 100) {
      showHistory(page.matches);
      nextCursor = page.next;
      $("#more").hidden = !page.next;
      return;
    }
    const fresh = new Set(page.matches.map((m) => m.id));
    showHistory(page.matches, [...body.children].slice(100).filter((tr) => !fresh.has(tr.dataset.id)));
  } catch (e) {
    console.error("history:", e);
  }
}

// MATCH_ROUTE is a match's address: #/match/ID, or #/match/ID?turn=N.
const MATCH_ROUTE = /^#\/match\/([0-9a-f]+)(?:\?turn=(\d+))?$/;

// EDITOR_ROUTE is the editor's: #/editor (the drafts), #/editor/ID.
const EDITOR_ROUTE = /^#\/editor(?:\/([^/?#]+))?$/;

// openEditor opens the editor's view, its module loaded first (then the
// page is routed again).
function openEditor(id) {
  if (editor) return editor.open(id);
  editorLoaded ||= import("./editor.js").then(
    ({ EditorView }) => {
      editor = new EditorView(viewer);
      editor.setGames(games);
      route();
    },
    (e) => {
      editorLoaded = null;
      $("#editor").hidden = false;
      $("#draft-error").textContent = "the editor did not load: " + e.message;
    },
  );
}

function route() {
  if (signInFirst(current())) return;
  const m = location.hash.match(MATCH_ROUTE);
  const l = location.hash.match(/^#\/ladder\/([a-z0-9_-]+)(?:\/entry\/(\d+))?$/);
  const a = location.hash.match(/^#\/(signin|signup|password|account|mybots|admin)(?:\/(.+))?$/);
  const c = location.hash.match(/^#\/contests?(?:\/(\d+))?(?:\?invite=([A-Za-z0-9_-]+))?$/);
  const ch = location.hash.match(/^#\/challenges(?:\/(\d+|new))?(?:\?(.*))?$/);
  const ed = location.hash.match(EDITOR_ROUTE);
  if (m) viewer.open(m[1], m[2] != null ? Number(m[2]) : null);
  // The editor shows its runs' matches in the viewer, beside it.
  else if (!ed) viewer.close();
  if (ed) openEditor(ed[1] != null ? decodeURIComponent(ed[1]) : null);
  else editor?.close();
  // Before signing in, where the server shows nothing, there are only
  // the account's views.
  if (l) ladders?.open(l[1], l[2] != null ? Number(l[2]) : null);
  else ladders?.close();
  if (c) contests?.open(c[1] != null ? Number(c[1]) : null, c[2] || "");
  else contests?.close();
  if (ch) challenges?.open(ch[1] || null, ch[2] || "");
  else challenges?.close();
  account.open(a ? a[1] : null, a && a[2] ? decodeURIComponent(a[2]) : null);
  if (notifications) {
    notifications.open(location.hash === "#/notifications");
    if (a && a[1] === "account") notifications.loadWebhook();
  }
  if (location.hash === "#/matches/mine") {
    $("#history-mine").checked = true;
    loadHistory();
  }
}

// The form is for those who may start matches: everyone in local mode,
// the signed-in in accounts mode.
function showForm(me) {
  // Signed out where the server shows nothing: the page starts again,
  // closed, rather than keep what it showed the one signed in.
  if (closed(me)) {
    location.replace("#/signin");
    location.reload();
    return;
  }
  const can = me.mode === "local" || !!me.user;
  $("#match-form").hidden = !can;
  $("#signin-hint").hidden = can;
  $("#history-mine").closest("label").hidden = me.mode === "local" || !me.user;
  $("#nav-challenges").hidden = !me.user;
  $("#nav-editor").hidden = !me.user;
  $(".play-myself").hidden = !me.user;
  if (can) fillMaps();
  loadHistory();
}

// closed says the server shows nothing to this visitor before they sign in.
const closed = (me) => me.mode === "accounts" && !me.user && me.public === "none";

// signInFirst sends a visitor the server shows nothing to the sign-in
// form (they may also be signing up or setting a password), and says
// whether it did.
function signInFirst(me) {
  if (!closed(me) || /^#\/(signin|signup|password)/.test(location.hash)) return false;
  location.hash = "#/signin";
  return true;
}

// refreshGames offers the games anew once an admin registered or removed one.
async function refreshGames() {
  offerGames(await api("/api/games"));
  fillMaps();
}

async function init() {
  // A match's page starts its stream first: the board need not wait for
  // the views, the forms and the history, and they wait for it (up to a
  // second), so that the stream is read as it comes.
  let board = null;
  // Any other page loads the other views' modules at once.
  const early = MATCH_ROUTE.test(location.hash) ? null : views();
  early?.catch(() => {}); // reported where it is awaited
  const me = await load((me) => {
    const match = !closed(me) && location.hash.match(MATCH_ROUTE);
    if (match) {
      viewer.open(match[1], match[2] != null ? Number(match[2]) : null);
      board = viewer.boardShown;
    }
  });
  if (closed(me)) {
    // Nothing to read without signing in: the account's views alone,
    // then, signed in, the rest (routed meanwhile: My bots opens at once).
    const { AccountView } = await import("./account.js");
    account = new AccountView([], refreshGames);
    $("#match-form").hidden = true;
    $("#signin-hint").hidden = false;
    window.addEventListener("hashchange", route);
    route();
    await new Promise((done) => onChange((me) => closed(me) || done()));
  }
  const listed = api("/api/games");
  if (board) {
    listed.then((g) => viewer.setGames(g)).catch(() => {});
    await Promise.race([board, new Promise((r) => setTimeout(r, 1000))]);
    // A task of its own: the board is drawn in an animation frame, and
    // what follows here would otherwise run in that frame's task, before
    // the board is painted.
    await new Promise((r) => setTimeout(r));
  }
  const [{ LadderView }, { ContestsView }, { ChallengesView }, { AccountView }, { Notifications }] = await (early || views());
  ladders = new LadderView();
  contests = new ContestsView();
  challenges = new ChallengesView();
  games = await listed;
  account ||= new AccountView(games, refreshGames);
  notifications = new Notifications();
  offerGames(games);
  $("#game").addEventListener("change", fillMaps);
  $("#map").addEventListener("change", fillBots);
  $("#play-myself").addEventListener("change", markMySeat);
  $("#my-seat").addEventListener("change", markMySeat);
  $("#match-form").addEventListener("submit", start);
  $("#more").addEventListener("click", () => loadHistory(true));
  for (const el of document.querySelectorAll("#history-filters input, #history-filters select")) el.addEventListener("change", () => loadHistory());
  onChange(showForm);
  window.addEventListener("hashchange", route); // once: a closed page's is the same
  route();
  setInterval(refreshHistory, 5000);
}

// labelCells labels each table cell added to the page with its column's
// heading (the heading's own text, not its hint): on a phone a row is
// shown as a block of its cells (style.css).
function labelCells(records) {
  for (const r of records)
    for (const n of r.addedNodes) {
      if (n.nodeType !== Node.ELEMENT_NODE) continue;
      for (const td of n.matches("td") ? [n] : n.querySelectorAll("td")) {
        const table = td.closest("table");
        const th = table && table.tHead && table.tHead.rows[0] ? table.tHead.rows[0].cells[td.cellIndex] : null;
        td.dataset.label = th && th.firstChild ? th.firstChild.textContent.trim() : "";
      }
    }
}
new MutationObserver(labelCells).observe(document.querySelector("main"), { childList: true, subtree: true });

init().catch((e) => ($("#form-error").textContent = "cannot reach the server: " + e.message));
