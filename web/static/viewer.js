// The match viewer: follows a match's stream, keeps every frame, and plays
// them back (autoplay, speed, scrubber, hotkeys), live or afterwards. Each
// game draws its frames with its own renderer (games/*.js). Frames from
// the stream are drawn at most once an animation frame, however fast they
// come: a long match, live or loaded whole, keeps the page responsive.
import { rendererFor } from "./games/index.js";
import { escapeHTML, botIds, bytes, follow } from "./util.js";
import { seatColour } from "./games/draw.js";
import { parse as parseNotes, draw as drawNotes } from "./games/annotate.js";
import { Charts } from "./charts.js";
import { api, canChange, current } from "./session.js";
import { PersonSeat } from "./play.js";

const $ = (sel) => document.querySelector(sel);

export class Viewer {
  constructor({ onChange }) {
    this.onChange = onChange;
    this.frames = [];
    this.incoming = []; // frames come, not read yet: [index, JSON text]
    this.index = 0;
    this.follow = true; // show each new frame as it arrives
    this.playing = false;
    this.timer = null;
    this.source = null;
    this.match = null;
    this.over = false;
    // players are the games' own viewer pages (a logic game's, when it
    // ships one), by game, once the page has its games (setGames);
    // playersLeft are those that left their page (dropPlayer).
    this.players = {};
    this.playersLeft = new Set();
    // stderrLinks, when set, may rework a seat's stderr of the turn shown
    // (a <pre>): the editor links its draft's files there.
    this.stderrLinks = null;

    $("#play").addEventListener("click", () => this.toggle());
    $("#back").addEventListener("click", () => this.step(-1));
    $("#forward").addEventListener("click", () => this.step(1));
    $("#live").addEventListener("click", () => this.goLive());
    $("#speed").addEventListener("change", () => this.playing && this.play());
    // The slider's value is read before anything writes it back.
    $("#scrubber").addEventListener("input", (e) => {
      const i = Number(e.target.value);
      this.stop();
      this.show(i, false);
    });
    $("#copy-link").addEventListener("click", () => this.copyLink());
    $("#cancel").addEventListener("click", () => this.cancel());
    this.charts = new Charts($("#charts"), (i) => {
      this.pause();
      this.show(i, false);
    });
    document.addEventListener("keydown", (e) => this.key(e));
    // The seat the visitor plays, if any (play.js).
    this.seat = new PersonSeat();
    this.seat.onAsk = (q) => this.askPlayer(q);
    // A game's own viewer may say what its frame shows, for screen
    // readers: {type: "arena:label", text}; one that takes input says so
    // ({type: "arena:input"}) and sends the moves of the visitor's seat
    // ({type: "arena:move", answer}). Only the player's frame is heard,
    // and only while it has not left its page.
    window.addEventListener("message", (e) => {
      const frame = $("#player");
      if (e.source !== frame.contentWindow || !this.playerReady || !e.data) return;
      switch (e.data.type) {
        case "arena:label":
          frame.title = String(e.data.text).slice(0, 300);
          break;
        case "arena:input":
          this.playerInput = true;
          if (this.seat.asked) this.askPlayer({ ...this.seat.asked, deadline: new Date(this.seat.asked.deadline).toISOString(), seat: this.seat.match.seat });
          break;
        case "arena:move":
          if (this.playerInput && this.seat.playing()) this.seat.send(String(e.data.answer ?? ""));
          break;
      }
    });
    // A new size: the board now, the charts and the panel after it (a
    // render under way may be drawing a chart, not the board).
    window.addEventListener("resize", () => {
      if (!this.match || !this.firstBoard) return;
      this.draw();
      this.details();
    });
    $("#fullscreen").addEventListener("click", () => this.fullScreen());
    document.addEventListener("fullscreenchange", () => {
      $("#fullscreen").textContent = document.fullscreenElement ? "Exit full screen" : "Full screen";
      this.draw();
    });
  }

  // fullScreen shows the board and its legend on the whole screen (or
  // leaves it); the keys keep working there.
  fullScreen() {
    if (document.fullscreenElement) document.exitFullscreen();
    else $(".stage").requestFullscreen().catch(() => {});
  }

  // open shows match id; turn, when given, is the turn to open at (as
  // the viewer numbers turns), once its frame has come.
  open(id, turn = null) {
    if (this.match && this.match.id === id && (this.source || this.over)) {
      if (turn != null) this.goTo(turn);
      return;
    }
    this.close();
    this.wantTurn = turn;
    $("#viewer").hidden = false;
    this.id = id;
    this.frames = [];
    this.index = 0;
    this.follow = true;
    this.over = false;
    this.pending = 0;
    this.incoming = [];
    this.ids = this.names = null;
    this.firstBoard = false;
    // boardShown resolves once the first board is drawn (or there will
    // be none: no turn, the stream refused, the viewer closed): the
    // page's other work waits for it (app.js init).
    this.boardShown = new Promise((r) => (this.showBoard = r));
    this.laidOut = false; // render's first frame
    this.detailsDue = null; // render's next chart
    // The seats whose bots drew annotations, and those hidden.
    this.notesSeen = new Set();
    this.notesOff = new Set();
    $("#annotations").hidden = true;
    this.charts.reset();
    this.match = { id, status: "", bots: [] };
    $("#result").className = "result";
    $("#result").innerHTML = "";
    $("#match-title").textContent = `Match ${id}`;
    // The stream, read with fetch (util.js follow): a finished match's
    // frames come whole, and are read a slice an animation frame (take).
    this.source = follow(`/api/matches/${id}/stream`, {
      match: (data) => this.onMatch(JSON.parse(data)),
      frame: (data, index) => this.onFrame(data, Number(index)),
      end: () => {
        this.over = true;
        this.source = null;
        // The label at once: a render may be pending for a round of
        // charts, which leaves the label alone.
        this.status();
        // A match with no turn has no board to wait for.
        if (!this.frames.length && !this.incoming.length) this.showBoard();
        this.schedule();
      },
    }, () => {
      this.source = null;
      this.showBoard();
      if (!this.over) $("#match-status").textContent = "disconnected";
    });
    this.update();
  }

  // askPlayer tells a game's own player that takes input the question
  // of the visitor's seat.
  askPlayer(q) {
    const frame = $("#player");
    if (!this.playerInput || !this.playerReady || frame.hidden || !frame.contentWindow) return;
    frame.contentWindow.postMessage({ type: "arena:ask", turn: q.turn, input: q.input, deadline: q.deadline, seat: q.seat }, "*");
  }

  close() {
    if (this.showBoard) this.showBoard();
    this.seat.stop();
    if (this.source) this.source();
    this.source = null;
    if (this.pending) cancelAnimationFrame(this.pending);
    this.pending = 0;
    this.pause();
    this.match = null;
    this.ids = this.names = null;
    this.over = false;
    $("#viewer").hidden = true;
  }

  onMatch(m) {
    const was = this.match.status;
    this.match = m;
    this.ids = botIds(m.bots);
    // A ladder's match plays images by id: its entries' names say who.
    this.names = this.ids.map((id, seat) => (m.ladder && m.ladder[seat] ? m.ladder[seat].name : id));
    $("#match-title").textContent = `${m.game} · ${m.map} · seed ${m.seed_text ?? m.seed}` + (m.ladder ? " · ladder" : "");
    const st = $("#match-status");
    st.className = `status ${m.status}`;
    st.textContent = m.status + (m.position ? ` (#${m.position} in line)` : "") + (m.replay_expired ? " · replay expired (its result stays)" : "");
    $("#download").hidden = !m.replay;
    if (m.replay) $("#download").href = m.replay;
    $("#cancel").hidden = ["finished", "failed", "cancelled"].includes(m.status) || !canChange(m.owner);
    // A seat of the visitor's: they play it here while the match lasts.
    const me = current().user;
    const mine = me ? m.bots.indexOf("human:" + me.name) : -1;
    if (mine >= 0 && this.isLive()) this.seat.start(m, mine);
    this.legend();
    this.result();
    // The turn's label says whether the match is live: at once, as a
    // round of charts may hold the next board back.
    this.status();
    if (was !== m.status && this.onChange) this.onChange();
    // The board and the charts follow at the next animation frame (frames
    // that came before the match said its game are drawn then).
    this.schedule();
  }

  // schedule has the page show the match at the next animation frame.
  schedule() {
    if (!this.pending) this.pending = requestAnimationFrame(() => this.render());
  }

  // onFrame keeps a frame of the stream, as its JSON text; the page reads
  // and shows it at the next animation frame (render), with whatever else
  // came meanwhile.
  onFrame(data, index) {
    this.incoming.push([index, data]);
    this.schedule();
  }

  // take reads the frames that came, for at most budget milliseconds (a
  // finished match comes all at once: it is read a slice an animation
  // frame, the board shown from the first); it reports whether some are
  // left.
  take(budget) {
    const end = performance.now() + budget;
    let k = 0;
    while (k < this.incoming.length) {
      const [index, data] = this.incoming[k++];
      const frame = JSON.parse(data);
      this.frames[index] = frame;
      if (this.wantTurn != null && frame && frame.turn >= this.wantTurn) {
        this.wantTurn = null;
        this.index = index;
        this.follow = false;
      }
      if (performance.now() >= end) break;
    }
    this.incoming = k < this.incoming.length ? this.incoming.slice(k) : [];
    return this.incoming.length > 0;
  }

  // render shows what came from the stream since the last paint, a
  // piece an animation frame, each short: the page laid out first (the
  // frame after the viewer opened), then the board, then each chart and
  // the turn's panel. While frames are still queued (a finished match
  // comes whole) the board stays on the first frame it drew, the rest
  // are read a slice an animation frame, and the charts wait: all move
  // on, following, once all are in, rather than being drawn again for
  // every slice.
  render() {
    if (this.pending) cancelAnimationFrame(this.pending);
    this.pending = 0;
    if (!this.match) return;
    if (!this.laidOut) {
      this.laidOut = true;
      return this.schedule();
    }
    if (this.detailsDue != null) {
      const k = this.detailsDue;
      if (this.ids) this.charts.update(this.frames, this.index, this.ids, this.match.game, this.over && !this.incoming.length, k);
      // A chart drawn earlier in the round went stale (the match ended
      // within it, rescaling the turn axis): the round again.
      this.detailsDue = k + 1 < this.charts.charts.length ? k + 1 : this.chartsBehind() ? 0 : null;
      if (this.detailsDue == null) this.panel();
      if (this.detailsDue != null || this.incoming.length) this.schedule();
      return;
    }
    // The first board is drawn with the first frame alone read: the
    // task that draws it is the longest of a match's opening.
    const more = this.take(this.firstBoard ? 8 : 0);
    const was = this.index;
    if (this.follow && this.frames.length && (!more || !this.firstBoard)) this.index = this.frames.length - 1;
    const board = !more || !this.firstBoard || this.index !== was;
    if (board) this.draw();
    this.status();
    if (more) this.schedule();
    else if (board) {
      this.detailsDue = 0;
      this.schedule();
    } else this.details();
  }

  // show moves to frame i; follow says whether to keep showing new frames.
  show(i, follow) {
    if (!this.frames.length) return this.update();
    this.index = Math.max(0, Math.min(this.frames.length - 1, i));
    this.follow = follow;
    this.draw();
    this.update();
  }

  // goTo shows the frame of turn (the first at or after it), or waits
  // for it while the match plays.
  goTo(turn) {
    const i = this.frames.findIndex((f) => f && f.turn >= turn);
    if (i >= 0) return this.show(i, false);
    this.wantTurn = turn;
  }

  // link is the address of the turn shown.
  link() {
    const f = this.frame();
    const base = location.href.split("#")[0];
    return `${base}#/match/${this.id}` + (f ? `?turn=${f.turn}` : "");
  }

  // copyLink puts the link to the turn shown on the clipboard, or shows
  // it to be copied by hand where the page may not write the clipboard
  // (plain HTTP from another machine).
  async copyLink() {
    const url = this.link();
    const note = $("#link-note");
    try {
      await navigator.clipboard.writeText(url);
      note.textContent = `Link copied: ${url}`;
    } catch {
      note.textContent = `Copy this link: ${url}`;
    }
    note.hidden = false;
    clearTimeout(this.noteTimer);
    this.noteTimer = setTimeout(() => (note.hidden = true), 8000);
  }

  step(n) {
    const target = this.index + n;
    this.show(target, target >= this.frames.length - 1 && this.isLive());
  }

  isLive() {
    return !["finished", "failed", "cancelled"].includes(this.match.status);
  }

  goLive() {
    this.show(this.frames.length - 1, true);
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  play() {
    this.pause();
    this.playing = true;
    if (this.index >= this.frames.length - 1 && !this.isLive()) this.show(0, false);
    const speed = Number($("#speed").value);
    this.timer = setInterval(() => {
      if (this.index < this.frames.length - 1) this.show(this.index + 1, false);
      else if (this.isLive()) this.show(this.index, true);
      else this.pause();
    }, 1000 / speed);
    this.update();
  }

  pause() {
    this.stop();
    this.update();
  }

  // stop ends autoplay, touching nothing on the page.
  stop() {
    clearInterval(this.timer);
    this.timer = null;
    this.playing = false;
  }

  // The original game's hotkeys.
  key(e) {
    if (!this.match || $("#viewer").hidden) return;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName) && document.activeElement.id !== "scrubber") return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    switch (e.key) {
      case "a":
      case "A":
        if (e.shiftKey) return;
        this.toggle();
        break;
      case " ":
        this.pause();
        this.step(1);
        break;
      case "n":
        this.pause();
        this.step(1);
        break;
      case "b":
        this.pause();
        this.step(-1);
        break;
      case "N":
        this.pause();
        this.step(10);
        break;
      case "B":
        this.pause();
        this.step(-10);
        break;
      case "f":
        this.fullScreen();
        break;
      default: {
        // A seat's number shows or hides its bot's annotations.
        const seat = Number(e.key) - 1;
        if (!/^[1-9]$/.test(e.key) || !this.notesSeen || !this.notesSeen.has(seat)) return;
        this.showNotes(seat, this.notesOff.has(seat));
      }
    }
    e.preventDefault();
  }

  async cancel() {
    try {
      await api(`/api/matches/${this.match.id}`, { method: "DELETE" });
    } catch (e) {
      alert(e.message);
    }
  }

  frame() {
    return this.frames[this.index];
  }

  // setGames takes the games' own viewer pages from the page's list of
  // games (at its start, and whenever the list changes) and shows the
  // match again with them.
  setGames(games) {
    const players = {};
    for (const g of games) if (g.player) players[g.name] = g.player;
    if (JSON.stringify(players) === JSON.stringify(this.players)) return;
    this.players = players;
    if (this.match) this.draw();
  }

  // toPlayer shows the game's own viewer page, in a sandboxed iframe (an
  // origin of its own: it can read nothing of this page or the server),
  // and hands it the frame by postMessage: {type: "arena:frame", index,
  // count, frame, ids, annotations} (annotations: each seat's items drawn
  // this turn, games/annotate.js). Its page loads once: a second load is the player
  // gone to another page (it navigated itself), and it is torn down.
  toPlayer(url, f) {
    const frame = $("#player");
    $("#board").hidden = true;
    frame.hidden = false;
    const annotations = {};
    for (const b of f.bots || []) {
      const items = parseNotes(b.stderr).items;
      if (items.length) annotations[b.seat] = items;
    }
    const msg = { type: "arena:frame", index: this.index, count: this.frames.length, frame: f, ids: this.ids || [], annotations };
    this.lastPlayerMessage = msg;
    if (frame.getAttribute("src") !== url) {
      this.playerReady = false;
      this.playerInput = false;
      let loads = 0;
      frame.onload = () => {
        if (++loads > 1) return this.dropPlayer(url);
        this.playerReady = true;
        if (!this.loading()) frame.contentWindow.postMessage(this.lastPlayerMessage, "*");
      };
      frame.setAttribute("src", url);
    } else if (this.playerReady && frame.contentWindow && !this.loading()) {
      // A finished match's player gets the turn shown once all are read,
      // not the first board while they are.
      frame.contentWindow.postMessage(msg, "*");
    }
  }

  // dropPlayer tears down a player that left its page: it gets no frame
  // more, its iframe is emptied, and the game is shown in the generic
  // view from then on, with a note saying why.
  dropPlayer(url) {
    const frame = $("#player");
    frame.onload = null;
    this.playerReady = false;
    this.playerInput = false;
    this.playersLeft.add(url);
    frame.setAttribute("src", "about:blank");
    frame.hidden = true;
    frame.title = "the game's own viewer";
    $("#player-note").hidden = false;
    this.draw();
  }

  draw() {
    const f = this.frame();
    const game = this.match && this.match.game;
    const r = rendererFor(game);
    const canvas = $("#board");
    if (!f || !r) return;
    const player = this.players[game];
    if (player && !this.playersLeft.has(player)) {
      this.toPlayer(player, f);
      return this.boardIsShown();
    }
    canvas.hidden = false;
    $("#player").hidden = true;
    $("#player-note").hidden = !player;
    // What the board shows, for screen readers; a renderer may say more.
    canvas.setAttribute("aria-label", `${this.match.game}: turn ${f.turn} of ${this.frames.length ? this.frames[this.frames.length - 1].turn : f.turn}`);
    const at = r.draw(canvas, f, { ids: this.ids || [], frames: this.frames, index: this.index, match: this.match });
    if (at && at.at) this.annotate(canvas, f, at);
    this.boardIsShown();
  }

  // boardIsShown notes that the match's first frame is shown, on the board
  // or by the game's own player: the page goes on (app.js init), and the
  // frames are read a slice an animation frame, not one (render).
  boardIsShown() {
    if (this.firstBoard) return;
    this.firstBoard = true;
    performance.mark("arena:first-board"); // for the viewer's benchmark
    this.showBoard();
  }

  // annotate draws over the board what the bots said they were thinking
  // this turn (games/annotate.js), but the seats hidden; what does not
  // read is left to the turn's panel.
  annotate(canvas, f, at) {
    let drawn = 0;
    let bad = 0;
    try {
      const g = canvas.getContext("2d");
      for (const b of f.bots || []) {
        const notes = parseNotes(b.stderr);
        bad += notes.bad;
        if (!notes.items.length) continue;
        if (!this.notesSeen.has(b.seat)) {
          this.notesSeen.add(b.seat);
          this.noteControls();
        }
        if (this.notesOff.has(b.seat)) continue;
        drawNotes(g, notes.items, at, seatColour(b.seat));
        drawn += notes.items.length;
      }
    } catch (e) {
      console.error("annotations:", e);
    }
    canvas.dataset.annotations = drawn;
    canvas.dataset.annotationsBad = bad;
  }

  // noteControls offers a checkbox (and a key, the seat's number) for
  // each bot that annotates.
  noteControls() {
    const box = $("#annotations");
    box.hidden = false;
    box.replaceChildren(document.createTextNode("Annotations: "));
    for (const seat of [...this.notesSeen].sort((a, b) => a - b)) {
      const label = document.createElement("label");
      label.title = `key ${seat + 1}`;
      label.innerHTML = `<input type="checkbox" data-seat="${seat}"${this.notesOff.has(seat) ? "" : " checked"}> <span class="swatch" style="background:${seatColour(seat)}"></span> ${escapeHTML(this.label((this.ids || [])[seat] || `seat ${seat + 1}`))} <small class="hint">(${seat + 1})</small> `;
      label.querySelector("input").addEventListener("change", (e) => this.showNotes(seat, e.target.checked));
      box.append(label);
    }
  }

  showNotes(seat, on) {
    if (on) this.notesOff.delete(seat);
    else this.notesOff.add(seat);
    const box = $(`#annotations input[data-seat="${seat}"]`);
    if (box) box.checked = on;
    this.draw();
  }

  // update shows the frame at index: the turn, the controls, the charts
  // and the turn's panel.
  update() {
    this.status();
    this.details();
  }

  // status shows the turn and sets the controls.
  status() {
    const last = Math.max(0, this.frames.length - 1);
    const f = this.frame();
    $("#scrubber").max = last;
    $("#scrubber").value = this.index;
    const turn = f ? f.turn : 0;
    const lastTurn = this.frames.length ? this.frames[last].turn : 0;
    // No "Turn 0 / 0" before the first frame is read: that reads as a
    // match over at its start.
    if (!this.frames.length) $("#turn").textContent = this.over && !this.incoming.length ? "No turns" : this.isLiveMatch() ? "Waiting for the first turn" : "Loading the turns…";
    // Nor "Turn 0 / 0" while a finished match's turns are still read:
    // the last turn is not known yet.
    else if (this.loading()) $("#turn").textContent = `Turn ${turn} / … · loading the turns`;
    else $("#turn").textContent = `Turn ${turn} / ${lastTurn}` + (this.isLiveMatch() ? (this.follow ? " · live" : " · replaying") : "");
    $("#play").textContent = this.playing ? "Pause" : "Play";
    $("#live").hidden = !this.isLiveMatch() || this.follow;
  }

  // details shows the charts (once the match has said its bots) and the
  // turn's panel.
  details() {
    if (this.ids && this.match) this.charts.update(this.frames, this.index, this.ids, this.match.game, this.over && !this.incoming.length);
    this.panel();
    // A chart drawn afresh comes a piece a call (charts.js STEP): the rest
    // at the animation frames to come, a chart each.
    if (this.detailsDue == null && this.chartsBehind()) {
      this.detailsDue = 0;
      this.schedule();
    }
  }

  // chartsBehind says whether some chart does not show every frame yet.
  chartsBehind() {
    return !!this.ids && this.frames.length > 0 && !this.charts.current();
  }

  // loading says a finished match's turns are still being read.
  loading() {
    return !this.isLiveMatch() && (!this.over || this.incoming.length > 0);
  }

  isLiveMatch() {
    return this.match && this.match.status && this.isLive();
  }

  legend() {
    const ids = this.ids || [];
    const res = this.match.result;
    $("#legend").replaceChildren(
      ...ids.map((id, seat) => {
        const div = document.createElement("div");
        const b = res && res.bots[seat];
        const status = b && b.status !== "ok" ? ` <span class="bad">${escapeHTML(b.status)} at turn ${b.fault_turn}</span>` : "";
        const m = this.match;
        const name = m.ladder && m.ladder[seat] ? `<a href="#/ladder/${encodeURIComponent(m.game)}/entry/${m.ladder[seat].entry_id}">${escapeHTML(m.ladder[seat].name)}</a>` : escapeHTML(id);
        div.innerHTML = `<span class="swatch" style="background:${seatColour(seat)}"></span>${name}${status}`;
        return div;
      }),
    );
  }

  // rerunCommand is the command that reproduces a bot's answer of this
  // turn from the downloaded replay (once the match is over).
  rerunCommand(seat, turn) {
    const m = this.match;
    if (!m || !m.replay || turn < 1) return "";
    return `arena replay rerun arena-${m.game}-${m.id}.json --seat ${seat} --turn ${turn}`;
  }

  // The per-turn panel: each bot's answer, timing and stderr this turn,
  // and the command that reproduces it.
  panel() {
    const f = this.frame();
    const rows = [];
    const ids = this.ids || [];
    for (let seat = 0; seat < ids.length; seat++) {
      const b = f && f.bots ? f.bots.find((x) => x.seat === seat) : null;
      const tr = document.createElement("tr");
      let status = "";
      if (b) {
        status = b.status === "ok" ? "ok" : `<span class="bad">${escapeHTML(b.status)}</span>`;
        if (b.detail) status += `<br><small>${escapeHTML(b.detail)}</small>`;
        else if (b.fault) status += `<br><small>not asked: disabled</small>`;
      }
      const answer = b ? (b.answer !== undefined ? b.answer : b.answer_b64 ? "(binary) " + b.answer_b64 : "") : "";
      // One window (thawed to answer read): wall clock, the bot's own CPU
      // time in it (what the limit counts, with the CPU charged for running
      // while stopped), and the time it waited for a CPU (a busy host, not
      // a slow bot).
      const msOf = (us) => (us / 1000).toFixed(2) + " ms";
      const time = b && b.time_us ? msOf(b.time_us) +
        (b.cpu_us != null ? `<br><small>cpu ${msOf(b.cpu_us)}</small>` : "") +
        (b.stopped_cpu_us ? `<br><small class="bad" title="CPU its cgroup used between its last answer and this state, while it should have been stopped: counted against this answer">+ ${msOf(b.stopped_cpu_us)} charged while stopped</small>` : "") +
        (waited(b) ? `<br><small title="runnable but kept from a CPU by the host: a busy host, not a slow bot">waited ${msOf(b.wait_us)}</small>` : "") : "";
      const stderr = b && b.stderr ? `<pre>${escapeHTML(b.stderr)}</pre>` + (b.stderr_dropped ? `<small>(${b.stderr_dropped} bytes dropped)</small>` : "") : "";
      const cmd = b && b.asked ? this.rerunCommand(seat, f.turn) : "";
      const rerun = cmd ? `<br><code class="rerun" title="reproduce this answer: download the replay, then run this">${escapeHTML(cmd)}</code> <small><a href="/download/arena" download="arena" class="get-arena" title="the arena command, a static Linux binary (chmod +x arena)">get arena</a></small>` : "";
      tr.innerHTML = `<td><span class="swatch" style="background:${seatColour(seat)}"></span> ${escapeHTML(this.label(ids[seat]))}</td><td>${status}</td><td><code>${escapeHTML(answer.slice(0, 300))}</code>${rerun}</td><td>${time}</td><td>${stderr}</td>`;
      const pre = stderr && this.stderrLinks ? tr.querySelector("td:last-child pre") : null;
      if (pre) this.stderrLinks(seat, pre);
      rows.push(tr);
    }
    $("#turn-panel tbody").replaceChildren(...rows);
  }

  // label is how a bot id is shown: its ladder entry's name, if any.
  label(id) {
    const seat = (this.ids || []).indexOf(id);
    return seat >= 0 && this.names ? this.names[seat] : id;
  }

  // The result banner.
  result() {
    const m = this.match;
    const el = $("#result");
    if (m.status === "failed" || m.status === "cancelled") {
      el.className = "result visible failed";
      el.innerHTML = `<strong>Match ${escapeHTML(m.status)}</strong>: ${escapeHTML(m.error || "")}`;
      return;
    }
    if (m.status !== "finished" || !m.result) {
      el.className = "result";
      return;
    }
    const r = m.result;
    // A draw: nobody won, or every bot did (tanks that die together share the win).
    const draw = !r.winners.length || (r.bots.length > 1 && r.winners.length === r.bots.length);
    const winners = draw ? "Draw" : (r.winners.length > 1 ? "Shared win: " : "Winner: ") + r.winners.map((w) => escapeHTML(this.label(w))).join(", ");
    const rows = r.bots
      .map((b) => {
        const status = b.status === "ok" ? '<span class="good">ok</span>' : `<span class="bad">${escapeHTML(b.status)} at turn ${b.fault_turn}</span>`;
        const died = b.death_reason ? `${escapeHTML(b.death_reason)} at ${b.death_turn}` : "–";
        const cpu = b.cpu_ms != null ? b.cpu_ms.toFixed(0) + " ms" : "n/a";
        return `<tr><td><span class="swatch" style="background:${seatColour(b.seat)}"></span> ${escapeHTML(this.label(b.id))}</td><td>${status}</td><td>${b.score}</td><td>${died}</td><td>${b.answer_ms_p50.toFixed(2)} / ${b.answer_ms_max.toFixed(2)} ms</td><td>${cpu}</td><td>${bytes(b.mem_peak_bytes)}</td></tr>`;
      })
      .join("");
    // Why each faulted bot faulted: a crash's exit and its reason on stderr.
    const why = r.bots
      .filter((b) => b.status !== "ok" && b.fault_detail)
      .map((b) => `<li class="fault-detail"><span class="swatch" style="background:${seatColour(b.seat)}"></span> ${escapeHTML(this.label(b.id))} ${escapeHTML(b.status)} at turn ${b.fault_turn}: ${escapeHTML(b.fault_detail)}</li>`)
      .join("");
    el.className = "result visible";
    el.innerHTML = `<strong>${winners}</strong> after ${r.turns} turns
      <table><thead><tr><th>Bot</th><th>Status</th><th>Score</th><th>Died</th><th>Answer p50 / max</th><th>CPU</th><th>Memory peak</th></tr></thead><tbody>${rows}</tbody></table>${why ? `<ul class="plain faults">${why}</ul>` : ""}`;
  }
}

// waited says whether a bot's wait for a CPU is worth showing: a tenth of
// a millisecond or more, and not the whole answer's time (a bot let run
// between its answers has its waits there counted to its next answer,
// which says nothing of this one).
function waited(b) {
  return b.wait_us >= 100 && b.wait_us < 0.9 * b.time_us;
}
