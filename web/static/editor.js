// The editor (#/editor, #/editor/ID): a bot written, run and submitted
// in the page. #/editor lists the visitor's drafts (theirs and their
// teams') and makes one from a kit's starter; #/editor/ID is a draft: its
// files (new, rename, delete, the main file), tabs of the open ones in
// CodeMirror, saved as one types, its saves (History, restore); a Run
// against an opponent (or the visitor playing it), its build's log as it
// comes and its match in the page's viewer beside the editor; Submit,
// which builds it into the visitor's registry and follows its check.
// Errors in the log and in the bot's stderr link to the file and line
// (errlinks.js).
//
// This module, and CodeMirror (vendor/codemirror/, plain scripts), load
// only when the editor is first opened (app.js): never at the page's
// start, nor before a match's first board.
import { api, current, onChange } from "./session.js";
import { escapeHTML, localTime, bytes, follow, botIds } from "./util.js";
import { segments } from "./errlinks.js";

const $ = (sel) => document.querySelector(sel);

// SAVE_AFTER is how long typing pauses before the draft is saved.
const SAVE_AFTER = 1500;

// STDERR_TURNS is how many of the bot's last turns with stderr are shown
// after a run.
const STDERR_TURNS = 12;

// CHECK_WAIT is how long a submitted version's check is followed here.
const CHECK_WAIT = 10 * 60 * 1000;

// CM is CodeMirror's folder, and what the editor uses of it, in the order
// the scripts must run (the modes and addons extend lib/codemirror.js).
const CM = "vendor/codemirror/";
const CM_STYLES = ["lib/codemirror.css", "addon/dialog/dialog.css"];
const CM_SCRIPTS = [
  "lib/codemirror.js",
  "mode/go/go.js",
  "mode/clike/clike.js",
  "mode/python/python.js",
  "mode/javascript/javascript.js",
  "addon/dialog/dialog.js",
  "addon/search/searchcursor.js",
  "addon/search/search.js",
  "addon/search/jump-to-line.js",
  "addon/edit/matchbrackets.js",
  "addon/edit/closebrackets.js",
  "addon/selection/active-line.js",
  "addon/comment/comment.js",
];

let codeMirror = null;

// loadCodeMirror adds CodeMirror's styles and scripts to the page, once,
// and resolves to CodeMirror once every script ran. Scripts added by a
// script run as soon as each arrives unless told otherwise: async =
// false runs them in the order added, fetched all at once.
function loadCodeMirror() {
  codeMirror ||= new Promise((resolve, reject) => {
    for (const href of CM_STYLES) {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = CM + href;
      document.head.append(link);
    }
    let left = CM_SCRIPTS.length;
    for (const src of CM_SCRIPTS) {
      const s = document.createElement("script");
      s.src = CM + src;
      s.async = false;
      s.onload = () => --left === 0 && resolve(window.CodeMirror);
      s.onerror = () => reject(new Error(`the editor's ${src} did not load: reload the page`));
      document.head.append(s);
    }
  });
  return codeMirror;
}

// modeOf is CodeMirror's mode for a file, by its extension (none: plain
// text). The C++ kit's .c files are compiled as C++.
function modeOf(path) {
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  if (ext === "go") return "go";
  if (ext === "py") return "python";
  if (["js", "mjs", "cjs"].includes(ext)) return "javascript";
  if (ext === "json") return { name: "javascript", json: true };
  if (["c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx"].includes(ext)) return "text/x-c++src";
  return null;
}

// indentOf is how a file is indented: Go with tabs (gofmt), JavaScript
// two spaces (the kit's), the others four.
function indentOf(path) {
  if (path.endsWith(".go")) return { indentUnit: 4, tabSize: 4, indentWithTabs: true };
  if (/\.[mc]?js$/.test(path)) return { indentUnit: 2, tabSize: 2, indentWithTabs: false };
  return { indentUnit: 4, tabSize: 4, indentWithTabs: false };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const final = (state) => ["done", "failed", "cancelled"].includes(state);
const dirOf = (p) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
const baseOf = (p) => p.slice(p.lastIndexOf("/") + 1);

function option(value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  return o;
}

// slug is a draft's name as a repository's last part (lower case,
// letters, digits, - and _).
function slug(name) {
  return name.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "") || "bot";
}

export class EditorView {
  // viewer is the page's viewer (viewer.js): a run's match is shown in it,
  // beside the editor.
  constructor(viewer) {
    this.viewer = viewer;
    this.games = [];
    this.kits = null; // GET /api/kits, once
    this.shown = false;
    this.opening = 0; // the latest open's number: an earlier one gives way
    this.cm = null; // the CodeMirror editor, made once
    this.runHint = $("#editor-run-result").textContent;
    this.reset();
    this.pane($("#editor").dataset.pane || "code");

    $("#draft-form").addEventListener("submit", (e) => this.create(e));
    $("#draft-game").addEventListener("change", () => this.fillKits());
    $("#drafts").addEventListener("click", (e) => this.listAction(e));
    $("#editor-save").addEventListener("click", () => this.flush(true));
    $("#editor-rename").addEventListener("click", () => this.rename(this.draft && this.draft.id, this.draft && this.draft.name));
    $("#editor-reload").addEventListener("click", () => this.reloadTheirs());
    $("#editor-keep").addEventListener("click", () => this.keepMine());
    $("#editor-run").addEventListener("submit", (e) => {
      e.preventDefault();
      this.run(false);
    });
    $("#editor-play").addEventListener("click", () => this.run(true));
    $("#editor-submit").addEventListener("submit", (e) => this.submit(e));
    $("#editor-newfile").addEventListener("submit", (e) => this.newFile(e));
    $("#editor-files").addEventListener("click", (e) => this.fileAction(e));
    $("#editor-tabs").addEventListener("click", (e) => this.tabAction(e));
    $("#editor-history").addEventListener("toggle", () => $("#editor-history").open && this.loadSaves());
    $("#editor-saves").addEventListener("click", (e) => {
      const b = e.target.closest("button[data-version]");
      if (b) this.restore(Number(b.dataset.version));
    });
    $("#editor-panes").addEventListener("click", (e) => {
      const b = e.target.closest("button[data-pane]");
      if (b) this.pane(b.dataset.pane);
    });
    // The viewer's per-turn stderr of the run's match: the draft's bot's
    // places in its files are links too.
    viewer.stderrLinks = (seat, pre) => {
      const m = viewer.match;
      if (this.shown && this.draft && this.runView && m && m.id === this.runMatch && seat === this.seatOf(m, this.runView)) this.linked(pre, pre.textContent);
    };
    // An error's link opens its file at its line.
    for (const sel of ["#editor-log", "#editor-stderr", "#editor-submit-log", "#turn-panel"]) {
      $(sel).addEventListener("click", (e) => {
        const a = e.target.closest("a.errlink");
        if (!a) return;
        e.preventDefault();
        this.openAt(a.dataset.path, Number(a.dataset.line), Number(a.dataset.col));
      });
    }
    // Ctrl/Cmd-S and Ctrl/Cmd-Enter anywhere in the draft's view (in
    // CodeMirror its own keys take them first).
    document.addEventListener("keydown", (e) => {
      if (!this.shown || !this.draft || e.defaultPrevented || !(e.ctrlKey || e.metaKey)) return;
      if (e.key === "s" || e.key === "S") {
        e.preventDefault();
        this.flush(true);
      } else if (e.key === "Enter") {
        e.preventDefault();
        this.run(false);
      }
    });
    // Leaving with changes not yet saved: saved now, and the browser asks.
    window.addEventListener("beforeunload", (e) => {
      if (!this.draft || (!this.changed && !this.saving)) return;
      this.flush(false);
      e.preventDefault();
      e.returnValue = "";
    });
    document.addEventListener("visibilitychange", () => document.hidden && this.draft && this.changed && this.flush(false));
    onChange(() => this.shown && !this.draft && this.showList());
  }

  // reset forgets the draft shown.
  reset() {
    this.draft = null; // the draft as the server last said (its files aside)
    this.files = new Map(); // path → text: every file (the open ones' as last synced)
    this.docs = new Map(); // path → CodeMirror document of an open file
    this.tabs = []; // the open files, in order
    this.currentPath = null;
    this.saved = null; // {files, main} the server holds at draft.version
    this.main = "";
    this.changed = false; // typed since the last save began
    this.saving = null; // the save under way (a promise of whether it saved)
    this.conflict = false; // a save was refused as changed elsewhere
    clearTimeout(this.saveTimer);
    if (this.stopRun) this.stopRun();
    this.stopRun = null;
    this.runId = null;
    this.runMatch = null; // the match of the run shown
    this.runView = null; // the run shown, as the server last told it
    this.runShown = false; // whether it is shown in the viewer
    this.startedHere = false; // whether this page started the run
    this.stderrOf = null; // the match whose stderr is shown
    this.human = false;
    this.log = "";
  }

  // clearRun empties the run's and the submission's panes (what was
  // typed to submit the last draft included), for another draft.
  clearRun() {
    const st = $("#editor-run-state");
    st.textContent = "";
    st.className = "status";
    delete st.dataset.state;
    delete st.dataset.run;
    $("#editor-run-match").hidden = true;
    this.say("editor-run-result", this.runHint);
    $("#editor-log").replaceChildren();
    $("#editor-stderr").hidden = true;
    $("#editor-submit-log").replaceChildren();
    $("#editor-submit-log").hidden = true;
    this.say("editor-submit-status", "", "");
    $("#editor-repo").value = "";
    $("#editor-tag").value = "v1";
    this.say("editor-files-error", "");
    $("#editor-history").open = false;
  }

  // setGames takes the games on offer (their titles and maps).
  setGames(games) {
    this.games = games;
    if (this.shown && !this.draft) this.fillGames();
    if (this.draft) this.fillMaps();
  }

  // open shows the list of drafts (id null) or a draft.
  async open(id) {
    const token = ++this.opening;
    this.shown = true;
    $("#editor").hidden = false;
    if (this.draft && String(this.draft.id) === String(id)) {
      this.showDraft();
      if (this.runMatch && this.runShown && !(this.viewer.match && this.viewer.match.id === this.runMatch)) this.viewer.open(this.runMatch);
      return;
    }
    if (this.draft) await this.leave();
    if (token !== this.opening) return;
    if (id == null) return this.showList();
    $("#editor-list").hidden = true;
    $("#editor-draft").hidden = false;
    // A match the viewer showed before (another page's) gives way to
    // this draft's runs.
    this.viewer.close();
    this.clearRun();
    this.say("editor-state", "loading…", "loading");
    try {
      const [CodeMirror, d] = await Promise.all([loadCodeMirror(), api(`/api/drafts/${encodeURIComponent(id)}`)]);
      if (token !== this.opening) return;
      this.makeEditor(CodeMirror);
      this.load(d);
      this.showDraft();
      this.loadOpponents();
      this.followRun(null);
    } catch (e) {
      if (token !== this.opening) return;
      this.say("editor-state", e.message, "error");
    }
  }

  // close hides the editor (another view is opened); what was typed is
  // saved.
  close() {
    if (!this.shown) return;
    this.shown = false;
    this.opening++;
    $("#editor").hidden = true;
    if (this.draft) this.flush(false);
  }

  // leave saves the draft shown and forgets it, its run's match closed.
  async leave() {
    await this.flush(true);
    if (this.runMatch && this.viewer.match && this.viewer.match.id === this.runMatch) this.viewer.close();
    this.reset();
  }

  say(id, text, state) {
    const el = document.getElementById(id);
    el.textContent = text;
    if (state !== undefined) el.dataset.state = state;
  }

  // ---- The list of drafts, and a new one.

  async showList() {
    $("#editor-list").hidden = false;
    $("#editor-draft").hidden = true;
    this.viewer.close();
    const me = current().user;
    $("#editor-signin").hidden = !!me;
    $("#draft-form").hidden = !me;
    $("#drafts").hidden = !me;
    if (!me) return;
    $("#draft-team-row").hidden = !me.teams.length;
    const team = $("#draft-team").value;
    $("#draft-team").replaceChildren(option("", `yourself (${me.name})`), ...me.teams.map((t) => option(t, `team ${t}`)));
    if (me.teams.includes(team)) $("#draft-team").value = team;
    try {
      this.kits ||= await api("/api/kits");
      this.fillGames();
      const { drafts } = await api("/api/drafts");
      this.drawList(drafts);
    } catch (e) {
      this.say("draft-error", e.message);
    }
  }

  // fillGames offers the games some kit has a starter for.
  fillGames() {
    if (!this.kits) return;
    const names = [...new Set(this.kits.flatMap((k) => Object.keys(k.games)))];
    const label = (n) => {
      const g = this.games.find((x) => x.name === n);
      return g && g.title ? `${g.title} (${n})` : n;
    };
    const keep = $("#draft-game").value;
    $("#draft-game").replaceChildren(...names.map((n) => option(n, label(n))));
    if (names.includes(keep)) $("#draft-game").value = keep;
    this.fillKits();
  }

  // fillKits offers the kits that have a starter for the game chosen.
  fillKits() {
    const game = $("#draft-game").value;
    const keep = $("#draft-kit").value;
    const kits = (this.kits || []).filter((k) => k.games[game]);
    $("#draft-kit").replaceChildren(...kits.map((k) => option(k.name, `${k.name} (${k.games[game].main})`)));
    if (kits.some((k) => k.name === keep)) $("#draft-kit").value = keep;
  }

  drawList(drafts) {
    const rows = drafts.map((d) => {
      const tr = document.createElement("tr");
      tr.dataset.id = d.id;
      tr.innerHTML = `<td><a href="#/editor/${encodeURIComponent(d.id)}">${escapeHTML(d.name)}</a></td><td>${escapeHTML(d.game)}</td><td>${escapeHTML(d.kit)}</td>
        <td>${escapeHTML(d.owner)}</td><td>v${d.version} · ${escapeHTML(localTime(d.updated_at))} <small>by ${escapeHTML(d.updated_by)} · ${bytes(d.size)}</small></td>
        <td><button type="button" class="small" data-act="rename" data-id="${escapeHTML(d.id)}" data-name="${escapeHTML(d.name)}">Rename</button>
        <button type="button" class="small" data-act="delete" data-id="${escapeHTML(d.id)}" data-name="${escapeHTML(d.name)}">Delete</button></td>`;
      return tr;
    });
    if (!rows.length) {
      const tr = document.createElement("tr");
      tr.innerHTML = '<td colspan="6" class="hint">no drafts yet: start one below</td>';
      rows.push(tr);
    }
    $("#drafts tbody").replaceChildren(...rows);
  }

  async listAction(e) {
    const b = e.target.closest("button[data-act]");
    if (!b) return;
    this.say("draft-error", "");
    if (b.dataset.act === "rename") return this.rename(b.dataset.id, b.dataset.name);
    if (!confirm(`Delete the draft ${b.dataset.name} and all its saves? What you submitted from it stays.`)) return;
    try {
      await api(`/api/drafts/${encodeURIComponent(b.dataset.id)}`, { method: "DELETE" });
      this.showList();
    } catch (err) {
      this.say("draft-error", err.message);
    }
  }

  // rename asks for a draft's new name.
  async rename(id, name) {
    if (id == null) return;
    const to = prompt("The draft's new name", name);
    if (!to || to === name) return;
    try {
      const d = await api(`/api/drafts/${encodeURIComponent(id)}`, { method: "PATCH", body: JSON.stringify({ name: to.trim() }) });
      if (this.draft && String(this.draft.id) === String(id)) {
        this.draft.name = d.name;
        this.showHead();
      } else this.showList();
    } catch (err) {
      this.say(this.draft ? "editor-files-error" : "draft-error", err.message);
    }
  }

  async create(e) {
    e.preventDefault();
    this.say("draft-error", "");
    const body = { name: $("#draft-name").value.trim(), game: $("#draft-game").value, kit: $("#draft-kit").value };
    if ($("#draft-team").value) body.team = $("#draft-team").value;
    try {
      const d = await api("/api/drafts", { method: "POST", body: JSON.stringify(body) });
      $("#draft-name").value = "";
      location.hash = `#/editor/${encodeURIComponent(d.id)}`;
    } catch (err) {
      this.say("draft-error", err.message);
    }
  }

  // ---- A draft: its files in CodeMirror.

  // makeEditor makes the CodeMirror editor, once.
  makeEditor(CodeMirror) {
    if (this.cm) return;
    this.CodeMirror = CodeMirror;
    const tab = (cm) => {
      if (cm.somethingSelected()) cm.indentSelection("add");
      else cm.execCommand(cm.getOption("indentWithTabs") ? "insertTab" : "insertSoftTab");
    };
    const save = () => this.flush(true);
    const run = () => this.run(false);
    this.cm = CodeMirror($("#editor-cm"), {
      lineNumbers: true,
      // A textarea on phones too: the viewer's and the seat's keys leave
      // a focused textarea alone, not a contenteditable.
      inputStyle: "textarea",
      matchBrackets: true,
      autoCloseBrackets: true,
      styleActiveLine: true,
      extraKeys: {
        "Ctrl-S": save,
        "Cmd-S": save,
        "Ctrl-Enter": run,
        "Cmd-Enter": run,
        "Ctrl-/": "toggleComment",
        "Cmd-/": "toggleComment",
        Tab: tab,
        "Shift-Tab": "indentLess",
      },
    });
    this.cm.on("changes", () => this.touch());
    // On a phone long lines wrap: read without scrolling sideways.
    const phone = matchMedia("(max-width: 600px)");
    const wrap = () => this.cm.setOption("lineWrapping", phone.matches);
    phone.addEventListener("change", wrap);
    wrap();
  }

  // load shows a draft as the server gave it (GET /api/drafts/ID): its
  // files, the main one open.
  load(d) {
    const { files, saves, ...draft } = d;
    this.draft = draft;
    this.main = draft.main;
    this.saved = { files, main: draft.main };
    this.files = new Map(Object.entries(files));
    this.docs = new Map();
    this.tabs = [];
    this.currentPath = null;
    this.changed = false;
    this.conflict = false;
    clearTimeout(this.saveTimer);
    $("#editor-conflict").hidden = true;
    this.say("editor-state", "saved", "saved");
    this.drawSaves(saves);
    this.showHead();
    this.drawFiles();
    if (this.mainFile() != null) this.openFile(this.mainFile());
    else this.cm.swapDoc(this.CodeMirror.Doc(""));
    this.drawTabs();
    this.fillMaps();
    const me = current().user;
    $("#editor-repo").placeholder = `${draft.owner || (me ? me.name : "you")}/${slug(draft.name)}`;
  }

  showDraft() {
    $("#editor-list").hidden = true;
    $("#editor-draft").hidden = false;
    if (this.cm) this.cm.refresh();
  }

  showHead() {
    const d = this.draft;
    $("#editor-title").textContent = d.name;
    $("#editor-meta").textContent = `${d.game} · ${d.kit} · ${d.owner} · v${d.version}`;
  }

  // mainFile is the file to open first: the main file, or for Go (whose
  // main is its package's folder) that folder's main.go or first file.
  mainFile() {
    const paths = [...this.files.keys()].sort();
    if (this.files.has(this.main)) return this.main;
    const inMain = paths.filter((p) => dirOf(p) === this.main.replace(/\/$/, ""));
    return inMain.find((p) => baseOf(p) === "main.go") || inMain[0] || paths[0] || null;
  }

  // text is a file's text as edited here.
  text(path) {
    return this.docs.has(path) ? this.docs.get(path).getValue() : this.files.get(path);
  }

  // snapshot is every file as edited here: what a save sends.
  snapshot() {
    return Object.fromEntries([...this.files.keys()].map((p) => [p, this.text(p)]));
  }

  // drawFiles shows the files as a tree: each folder's files under it.
  drawFiles() {
    const items = [];
    let folder = null;
    const isMain = (p) => p === this.main || dirOf(p) === this.main.replace(/\/$/, "");
    for (const p of [...this.files.keys()].sort()) {
      const dir = dirOf(p);
      if (dir && dir !== folder) {
        const li = document.createElement("li");
        li.className = "folder";
        li.textContent = dir + "/";
        items.push(li);
      }
      folder = dir;
      const li = document.createElement("li");
      li.dataset.path = p;
      li.className = (dir ? "nested" : "") + (p === this.currentPath ? " current" : "");
      li.innerHTML = `<a href="#" class="file" data-act="open">${escapeHTML(baseOf(p))}</a>${isMain(p) ? ' <small class="main-mark" title="the bot starts from it">main</small>' : ""}
        <span class="file-acts"><button type="button" class="small" data-act="main" title="make it the main file">main</button><button type="button" class="small" data-act="rename" title="rename or move it">rename</button><button type="button" class="small" data-act="delete" title="delete it">delete</button></span>`;
      items.push(li);
    }
    $("#editor-files").replaceChildren(...items);
  }

  drawTabs() {
    $("#editor-tabs").replaceChildren(
      ...this.tabs.map((p) => {
        const b = document.createElement("span");
        b.className = "tab" + (p === this.currentPath ? " current" : "");
        b.dataset.path = p;
        b.setAttribute("role", "tab");
        b.setAttribute("aria-selected", String(p === this.currentPath));
        b.innerHTML = `<button type="button" data-act="show" title="${escapeHTML(p)}">${escapeHTML(baseOf(p))}</button><button type="button" data-act="close" class="close" title="close it" aria-label="close ${escapeHTML(p)}">×</button>`;
        return b;
      }),
    );
  }

  // openFile shows a file in the editor, in a tab of its own.
  openFile(path) {
    if (!this.cm || path == null || !this.files.has(path)) return;
    if (!this.docs.has(path)) {
      const doc = this.CodeMirror.Doc(this.files.get(path), modeOf(path));
      this.docs.set(path, doc);
    }
    if (!this.tabs.includes(path)) this.tabs.push(path);
    this.currentPath = path;
    this.cm.swapDoc(this.docs.get(path));
    for (const [k, v] of Object.entries(indentOf(path))) this.cm.setOption(k, v);
    this.drawTabs();
    this.drawFiles();
  }

  // closeFile closes a file's tab (its text kept).
  closeFile(path) {
    if (this.docs.has(path)) this.files.set(path, this.docs.get(path).getValue());
    this.docs.delete(path);
    const at = this.tabs.indexOf(path);
    this.tabs = this.tabs.filter((p) => p !== path);
    if (this.currentPath === path) {
      this.currentPath = null;
      const next = this.tabs[Math.min(at, this.tabs.length - 1)];
      if (next) return this.openFile(next);
      this.cm.swapDoc(this.CodeMirror.Doc(""));
    }
    this.drawTabs();
    this.drawFiles();
  }

  tabAction(e) {
    const b = e.target.closest("button[data-act]");
    if (!b) return;
    const path = b.closest("[data-path]").dataset.path;
    if (b.dataset.act === "close") this.closeFile(path);
    else this.openFile(path);
  }

  // openAt opens a file at a line (and column), from 1, as an error's
  // link says.
  openAt(path, line, col) {
    if (!this.files.has(path)) return;
    this.pane("code");
    this.openFile(path);
    const at = { line: Math.max(0, line - 1), ch: Math.max(0, (col || 1) - 1) };
    this.cm.setCursor(at);
    this.cm.scrollIntoView(at, 80);
    this.cm.focus();
    // The line flashes, for the eye to find it.
    const handle = this.cm.addLineClass(at.line, "background", "error-line");
    setTimeout(() => this.cm.removeLineClass(handle, "background", "error-line"), 2500);
  }

  // pane shows one pane on a phone (Files, Editor, Log, Viewer); on a
  // wider screen all are shown.
  pane(name) {
    $("#editor").dataset.pane = name;
    for (const b of document.querySelectorAll("#editor-panes button")) b.setAttribute("aria-pressed", String(b.dataset.pane === name));
    if (name === "code" && this.cm) this.cm.refresh();
  }

  // ---- Saving.

  // touch notes a change: saved once typing pauses.
  touch() {
    this.changed = true;
    if (!this.conflict && !this.saving) this.say("editor-state", "changed", "changed");
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.flush(false), SAVE_AFTER);
  }

  // flush saves what was typed, now; all (force: what is typed meanwhile
  // too) before it resolves, to whether everything is saved. A draft
  // changed elsewhere is not saved until the visitor chose.
  async flush(force) {
    clearTimeout(this.saveTimer);
    while (this.saving) await this.saving;
    if (!this.draft || this.conflict) return false;
    const files = this.snapshot();
    if (JSON.stringify(files) === JSON.stringify(this.saved.files) && this.main === this.saved.main) {
      this.changed = false;
      this.say("editor-state", "saved", "saved");
      return true;
    }
    this.changed = false;
    const err = await this.put(files, this.main);
    if (err) {
      this.changed = true;
      if (!this.conflict) this.say("editor-state", "not saved: " + err.message, "error");
      return false;
    }
    if (this.changed && force) return this.flush(true);
    return true;
  }

  // put saves files (the whole draft) and main on the draft's version:
  // it resolves to null once the server took them, else to its refusal
  // (a refusal as changed elsewhere stops the saves: changedElsewhere).
  put(files, main) {
    const id = this.draft.id;
    this.say("editor-state", "saving…", "saving");
    this.saving = (async () => {
      try {
        const d = await api(`/api/drafts/${encodeURIComponent(id)}`, { method: "PUT", body: JSON.stringify({ base: this.draft.version, files, main }) });
        if (!this.draft || this.draft.id !== id) return null;
        const { files: _, saves, ...view } = d;
        Object.assign(this.draft, view);
        this.saved = { files, main: d.main || main };
        this.say("editor-state", this.changed ? "changed" : "saved", this.changed ? "changed" : "saved");
        this.showHead();
        if ($("#editor-history").open) this.loadSaves();
        return null;
      } catch (e) {
        if (this.draft && this.draft.id === id && e.status === 409) this.changedElsewhere(e.message);
        else if (this.draft && this.draft.id === id) this.say("editor-state", this.changed ? "changed" : "saved", this.changed ? "changed" : "saved");
        return e;
      } finally {
        this.saving = null;
      }
    })();
    return this.saving;
  }

  // changedElsewhere stops saving: another tab or a teammate saved a
  // newer version. The visitor reloads it or keeps their copy.
  changedElsewhere(message) {
    clearTimeout(this.saveTimer);
    this.conflict = true;
    this.say("editor-state", "changed elsewhere", "conflict");
    $("#editor-conflict-text").textContent = `Not saved: ${message}. `;
    $("#editor-conflict").hidden = false;
  }

  // reloadTheirs drops the copy here for the server's newest version.
  async reloadTheirs() {
    try {
      const d = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}`);
      const open = this.tabs.slice();
      const at = this.currentPath;
      this.load(d);
      for (const p of open) if (this.files.has(p)) this.openFile(p);
      if (at && this.files.has(at)) this.openFile(at);
    } catch (e) {
      this.say("editor-conflict-text", e.message);
    }
  }

  // keepMine saves the copy here over the server's newest version, once
  // the visitor confirms (that version stays in the history).
  async keepMine() {
    let d;
    try {
      d = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}`);
    } catch (e) {
      return this.say("editor-conflict-text", e.message);
    }
    if (!confirm(`Save your copy over version ${d.version} (saved by ${d.updated_by})? That version stays in the History.`)) return;
    this.draft.version = d.version;
    this.saved = { files: d.files, main: d.main };
    this.conflict = false;
    $("#editor-conflict").hidden = true;
    this.flush(true);
  }

  // change saves the draft with a file added, renamed or deleted, or
  // another main, then applies it here: the server judges a file's name,
  // and its refusal is shown in its words.
  async change(apply, files, main) {
    this.say("editor-files-error", "");
    await this.flush(false);
    if (this.conflict) {
      this.say("editor-files-error", "changed elsewhere: reload the server's version or keep yours first");
      return false;
    }
    while (this.saving) await this.saving;
    const err = await this.put(files, main);
    if (err) {
      if (!this.conflict) this.say("editor-files-error", err.message);
      return false;
    }
    this.main = main;
    apply();
    this.drawFiles();
    this.drawTabs();
    return true;
  }

  async newFile(e) {
    e.preventDefault();
    const name = $("#editor-newfile-name").value.trim();
    if (!name) return;
    if (this.files.has(name)) return this.say("editor-files-error", `${name} is a file of the draft already`);
    const files = { ...this.snapshot(), [name]: "" };
    if (!(await this.change(() => this.files.set(name, ""), files, this.main))) return;
    $("#editor-newfile-name").value = "";
    await this.adoptNames();
    if (this.files.has(name)) {
      this.openFile(name);
      this.pane("code");
    }
  }

  // adoptNames takes the files' names as the server keeps them (it
  // cleans a path, a/./b to a/b): files it names otherwise are renamed.
  async adoptNames() {
    try {
      const d = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}`);
      const theirs = Object.keys(d.files);
      if (theirs.length === this.files.size && theirs.every((p) => this.files.has(p))) return;
      for (const p of [...this.files.keys()]) {
        if (p in d.files) continue;
        this.closeFile(p);
        this.files.delete(p);
      }
      for (const p of theirs) if (!this.files.has(p)) this.files.set(p, d.files[p]);
      this.saved = { files: d.files, main: d.main };
      this.main = d.main;
      this.draft.version = d.version;
      this.drawFiles();
    } catch {
      // Shown as they are; the next save says what the server thinks.
    }
  }

  async fileAction(e) {
    const el = e.target.closest("[data-act]");
    if (!el) return;
    e.preventDefault();
    const path = el.closest("li[data-path]").dataset.path;
    const files = this.snapshot();
    switch (el.dataset.act) {
      case "open":
        this.openFile(path);
        return this.pane("code");
      case "main": {
        // Go's main is its package's folder.
        const main = this.draft.kit === "go" ? dirOf(path) || "." : path;
        return this.change(() => {}, files, main);
      }
      case "delete": {
        if (!confirm(`Delete ${path}? (The History keeps it.)`)) return;
        delete files[path];
        return this.change(() => {
          this.closeFile(path);
          this.files.delete(path);
        }, files, this.main);
      }
      case "rename": {
        const to = (prompt(`Rename ${path} to`, path) || "").trim();
        if (!to || to === path) return;
        if (this.files.has(to)) return this.say("editor-files-error", `${to} is a file of the draft already`);
        files[to] = files[path];
        delete files[path];
        const main = this.main === path ? to : this.main;
        const done = await this.change(() => {
          const wasOpen = this.tabs.includes(path);
          this.files.set(to, files[to]);
          this.closeFile(path);
          this.files.delete(path);
          if (wasOpen) this.openFile(to);
        }, files, main);
        if (done) await this.adoptNames();
        return;
      }
    }
  }

  // ---- History: the saves kept, and restoring one.

  async loadSaves() {
    try {
      const d = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}`);
      this.drawSaves(d.saves);
    } catch (e) {
      this.say("editor-files-error", e.message);
    }
  }

  drawSaves(saves) {
    $("#editor-saves").replaceChildren(
      ...(saves || []).map((s) => {
        const li = document.createElement("li");
        const newest = this.draft && s.version === this.draft.version;
        li.innerHTML = `v${s.version} <small class="hint">${escapeHTML(localTime(s.saved_at))} by ${escapeHTML(s.saved_by)} · ${bytes(s.size)}</small> ` +
          (newest ? '<small class="hint">(now)</small>' : `<button type="button" class="small" data-version="${s.version}">Restore</button>`);
        return li;
      }),
    );
  }

  // restore loads an old save's files and saves them as the newest
  // version (the one they replace stays in the history).
  async restore(version) {
    this.say("editor-files-error", "");
    if (!(await this.flush(true))) return this.say("editor-files-error", "save or resolve the changes here first");
    let v;
    try {
      v = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}/saves/${version}`);
    } catch (e) {
      return this.say("editor-files-error", e.message);
    }
    if (!confirm(`Restore version ${version}? Its files become the newest version; the current one (v${this.draft.version}) stays in the History.`)) return;
    const err = await this.put(v.files, v.main);
    if (err) return this.conflict || this.say("editor-files-error", err.message);
    try {
      this.load(await api(`/api/drafts/${encodeURIComponent(this.draft.id)}`));
    } catch (e) {
      this.say("editor-files-error", e.message);
    }
  }

  // ---- Runs.

  // fillMaps offers the draft's game's maps for two bots.
  fillMaps() {
    if (!this.draft) return;
    const g = this.games.find((x) => x.name === this.draft.game);
    const maps = g ? g.maps.filter((m) => m.min_players <= 2 && m.max_players >= 2) : [];
    const keep = $("#editor-map").value;
    $("#editor-map").replaceChildren(...maps.map((m) => option(m.name, m.width && m.height ? `${m.name} (${m.width}×${m.height})` : m.name)));
    if (maps.some((m) => m.name === keep)) $("#editor-map").value = keep;
  }

  // loadOpponents offers the bots the draft may play: the game's example
  // bots first (the first chosen), the visitor's own, the references.
  async loadOpponents() {
    const id = this.draft.id;
    try {
      const { opponents } = await api(`/api/drafts/${encodeURIComponent(id)}/opponents`);
      if (!this.draft || this.draft.id !== id) return;
      const groups = { example: "Example bots", mine: "Yours", reference: "References" };
      const keep = $("#editor-opponent").value;
      const parts = [];
      for (const [kind, label] of Object.entries(groups)) {
        const of = opponents.filter((o) => o.kind === kind);
        if (!of.length) continue;
        const g = document.createElement("optgroup");
        g.label = label;
        for (const o of of) {
          const opt = option(o.image, o.label || o.image);
          opt.title = o.image;
          opt.dataset.kind = kind;
          g.append(opt);
        }
        parts.push(g);
      }
      for (const o of opponents.filter((o) => !groups[o.kind])) parts.push(option(o.image, o.label || o.image));
      $("#editor-opponent").replaceChildren(...parts);
      if (opponents.some((o) => o.image === keep)) $("#editor-opponent").value = keep;
    } catch (e) {
      this.say("editor-run-result", "opponents: " + e.message);
    }
  }

  // run saves the draft, then builds it and plays it against the chosen
  // opponent (human: the visitor plays the other seat). A new run
  // cancels the visitor's previous one (the server's doing).
  async run(human) {
    if (!this.draft) return;
    this.say("editor-run-result", "");
    const opponent = $("#editor-opponent").value;
    if (!human && !opponent) return this.say("editor-run-result", "choose an opponent first");
    if (!(await this.flush(true))) return this.say("editor-run-result", "not run: the draft is not saved (see above)");
    const body = { base: this.draft.version, opponent };
    if ($("#editor-map").value) body.map = $("#editor-map").value;
    if (human) body.human = true;
    $("#editor-run-start").disabled = $("#editor-play").disabled = true;
    try {
      const r = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}/run`, { method: "POST", body: JSON.stringify(body) });
      this.human = human;
      this.log = r.log || "";
      this.runMatch = null;
      $("#editor-stderr").hidden = true;
      this.followRun(r.id);
      this.showRun(r);
      this.pane("log");
    } catch (e) {
      if (e.status === 409) this.changedElsewhere(e.message);
      this.say("editor-run-result", e.message);
    } finally {
      $("#editor-run-start").disabled = $("#editor-play").disabled = false;
    }
  }

  // followRun follows the draft's run (GET …/run/stream): its state at
  // each change, its build's log as it comes. id is the run this page
  // started (null: whichever the stream tells of, on opening the draft);
  // the stream is left once the run is over.
  followRun(id) {
    if (this.stopRun) this.stopRun();
    this.runId = id;
    this.startedHere = id != null;
    const draft = this.draft.id;
    const stop = follow(`/api/drafts/${encodeURIComponent(draft)}/run/stream`, {
      run: (data) => {
        const r = JSON.parse(data);
        if (!this.draft || this.draft.id !== draft) return;
        if (this.runId != null && r.id !== this.runId) {
          // A newer run took this one's place (the visitor's, from
          // another tab): it is the one shown, its log read whole.
          this.startedHere = false;
          this.readLog(r.id);
        }
        this.runId = r.id;
        this.showRun(r);
        if (final(r.state)) {
          stop();
          if (this.stopRun === stop) this.stopRun = null;
        }
      },
      log: (data) => {
        if (!this.draft || this.draft.id !== draft) return;
        // Each connection starts with the whole log so far: after a
        // reconnection it replaces the log, not adds to it.
        const chunk = chunkOf(data);
        this.log = this.log && chunk.startsWith(this.log) ? chunk : this.log + chunk;
        this.drawLog();
      },
    }, () => {});
    this.stopRun = stop;
  }

  // readLog reads a run's whole log (GET …/run), the run still shown.
  async readLog(id) {
    this.log = "";
    try {
      const r = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}/run`);
      if (r.id === this.runId && r.id === id) {
        this.log = r.log || "";
        this.drawLog();
      }
    } catch {
      // The chunks to come are shown.
    }
  }

  // showRun shows a run's state; once its match started, the match in
  // the viewer beside the editor (a run started here, or one playing);
  // once it is over, how it went.
  showRun(r) {
    this.runView = r;
    const st = $("#editor-run-state");
    st.className = `status ${r.state === "done" ? "finished" : r.state}`;
    st.textContent = r.state === "building" ? "building…" : r.state;
    st.dataset.state = r.state;
    st.dataset.run = r.id;
    if (r.human != null) this.human = !!r.human;
    this.drawLog();
    // The run names its match once it started (a run that says it no
    // more keeps the one it named).
    const match = (typeof r.match === "string" ? r.match : r.match && r.match.id) || this.runMatch;
    $("#editor-run-match").hidden = !match;
    if (match) $("#editor-run-match").href = `#/match/${encodeURIComponent(match)}`;
    if (r.state === "failed" || r.state === "cancelled") this.say("editor-run-result", r.error ? `${r.state}: ${r.error}` : r.state);
    if (match && match !== this.runMatch) {
      this.runMatch = match;
      this.runShown = this.startedHere || r.state === "playing";
      if (this.runShown && this.shown) {
        this.viewer.open(match);
        if (this.startedHere) this.pane("viewer");
        // A seat the visitor plays takes the arrows: out of the editor.
        if (this.human && document.activeElement) document.activeElement.blur();
      }
    }
    if (final(r.state) && match && this.stderrOf !== match) {
      this.stderrOf = match;
      this.afterMatch(match, r);
    }
  }

  // drawLog shows the build's log with its errors linked, at most once
  // an animation frame.
  drawLog() {
    if (this.logFrame) return;
    this.logFrame = requestAnimationFrame(() => {
      this.logFrame = 0;
      const el = $("#editor-log");
      const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
      this.linked(el, this.log);
      if (atEnd) el.scrollTop = el.scrollHeight;
    });
  }

  // linked fills el with text, its places in the draft's files as links
  // (errlinks.js).
  linked(el, text) {
    const paths = [...this.files.keys()];
    el.replaceChildren(
      ...segments(text, paths).map((s) => {
        if (!s.link) return document.createTextNode(s.text);
        const a = document.createElement("a");
        a.href = "#";
        a.className = "errlink";
        a.textContent = s.text;
        a.dataset.path = s.link.path;
        a.dataset.line = s.link.line;
        a.dataset.col = s.link.col;
        a.title = `open ${s.link.path} at line ${s.link.line}`;
        return a;
      }),
    );
  }

  // afterMatch says how the run's match went, and shows the draft's
  // bot's stderr of its last turns when it faulted or wrote an error
  // that points into its files (a caught exception's traceback).
  async afterMatch(id, r) {
    let m, rep;
    try {
      // A match that failed to start may have no replay.
      [m, rep] = await Promise.all([api(`/api/matches/${encodeURIComponent(id)}`), api(`/api/matches/${encodeURIComponent(id)}/replay`).catch(() => ({ frames: [] }))]);
    } catch (e) {
      return this.say("editor-run-result", `its match: ${e.message}`);
    }
    if (this.runMatch !== id) return;
    const seat = this.seatOf(m, r);
    const ids = botIds(m.bots);
    const res = m.result;
    const mine = res && res.bots ? res.bots.find((b) => b.seat === seat) : null;
    let outcome = m.status;
    if (res && m.status === "finished") {
      const w = res.winners || [];
      outcome = !w.length || w.length === res.bots.length ? "a draw" : w.includes(ids[seat]) ? "your bot won" : "your bot lost";
      outcome += ` after ${res.turns} turns`;
    }
    const faulted = mine && mine.status && mine.status !== "ok";
    this.say("editor-run-result", outcome + (faulted ? `; it ${mine.status.replaceAll("_", " ")} at turn ${mine.fault_turn}` : "") + (m.error ? `: ${m.error}` : ""));
    // Its stderr, the last turns that have some.
    const parts = [];
    for (const f of rep.frames || []) {
      const b = (f.bots || []).find((x) => x.seat === seat);
      if (b && b.stderr) parts.push(`— turn ${f.turn} —\n${b.stderr.replace(/\n?$/, "\n")}`);
    }
    const stderr = parts.slice(-STDERR_TURNS).join("");
    const detail = faulted && mine.fault_detail ? `${mine.status} at turn ${mine.fault_turn}: ${mine.fault_detail}` : "";
    const points = segments(stderr + detail, [...this.files.keys()]).some((s) => s.link);
    $("#editor-stderr").hidden = !(faulted || points);
    this.linked($("#editor-fault"), detail);
    this.linked($("#editor-stderr-text"), stderr || "(nothing on stderr)");
  }

  // seatOf is the draft's bot's seat in its run's match: as the run says,
  // else the seat played by neither the opponent nor a person.
  seatOf(m, r) {
    if (Number.isInteger(r.seat)) return r.seat;
    const opponent = r.opponent || $("#editor-opponent").value;
    const i = m.bots.findIndex((b) => b !== opponent && !String(b).startsWith("human:"));
    return i >= 0 ? i : 0;
  }

  // ---- Submitting.

  // submit saves the draft, then builds it on the server into the
  // visitor's registry (POST …/submit), following the build as My bots'
  // upload does, then the version's check: once ready it plays here.
  async submit(e) {
    e.preventDefault();
    if (!this.draft) return;
    const repository = $("#editor-repo").value.trim() || $("#editor-repo").placeholder;
    const tag = $("#editor-tag").value.trim() || "latest";
    const status = (text, state) => this.say("editor-submit-status", text, state);
    const log = $("#editor-submit-log");
    status("");
    if (!(await this.flush(true))) return status("not submitted: the draft is not saved", "failed");
    $("#editor-submit-start").disabled = true;
    try {
      let b = await api(`/api/drafts/${encodeURIComponent(this.draft.id)}/submit`, { method: "POST", body: JSON.stringify({ base: this.draft.version, repository, tag }) });
      log.hidden = false;
      this.pane("log");
      const show = () => {
        this.linked(log, `build ${b.id} of ${b.reference}: ${b.state}\n${b.log || ""}` + (b.error ? `\n${b.error}` : ""));
        status(b.state === "failed" ? `${b.reference}: the build failed` : `${b.reference}: ${b.state}…`, b.state);
      };
      show();
      while (b.state === "queued" || b.state === "building") {
        await sleep(700);
        b = await api(`/api/builds/${encodeURIComponent(b.id)}`);
        show();
      }
      if (b.state === "pushed") await this.followCheck(b, status);
    } catch (err) {
      if (err.status === 409) this.changedElsewhere(err.message);
      status(err.message, "failed");
    } finally {
      $("#editor-submit-start").disabled = false;
    }
  }

  // followCheck follows a pushed version's check (GET /api/registry)
  // until it is ready or rejected, and says where it then plays.
  async followCheck(b, status) {
    const { id, game } = this.draft;
    const until = Date.now() + CHECK_WAIT;
    while (Date.now() < until && this.draft && this.draft.id === id) {
      const reg = await api("/api/registry");
      const img = reg.images.find((i) => i.repository === b.repository && i.tag === b.tag && i.digest === b.digest);
      const state = img ? img.state || "pending" : "pending";
      if (state === "ready") {
        const ladder = `#/ladder/${encodeURIComponent(game)}`;
        $("#editor-submit-status").innerHTML = `<strong>${escapeHTML(b.reference)} is ready</strong>: it plays on this server by that name: in a <a href="#">new match</a>, on the <a href="${ladder}">${escapeHTML(game)} ladder</a> (register it there), in a <a href="#/contests">contest</a> or a <a href="#/challenges/new?bot=${encodeURIComponent(b.reference)}">challenge</a>; <a href="#/mybots">My bots</a> lists it.`;
        $("#editor-submit-status").dataset.state = "ready";
        return;
      }
      if (state === "rejected") {
        status(`${b.reference} was rejected by its check: ${img.reason || ""}`, "rejected");
        if (img.stderr) this.linked($("#editor-submit-log"), `${$("#editor-submit-log").textContent}\ncheck: rejected: ${img.reason || ""}\n${img.stderr}`);
        return;
      }
      status(`${b.reference}: pushed; its check (a short match against the game's example bot) is under way…`, "pending");
      await sleep(2000);
    }
    if (this.draft && this.draft.id === id) status(`${b.reference}: pushed; its check is still pending: My bots shows it when done`, "pending");
  }
}

// chunkOf is a "log" event's text: the chunk itself, or a JSON string of
// it.
function chunkOf(data) {
  if (data.startsWith('"')) {
    try {
      const s = JSON.parse(data);
      if (typeof s === "string") return s;
    } catch {
      // the text itself
    }
  }
  return data;
}
