// The seat a person plays, in the viewer. It asks the server for the
// seat's question (GET /api/matches/ID/moves?after=T, which waits for the
// next turn), says whose move it is and the time left, and sends the
// person's move (POST …/moves) from the keyboard, the pad on the page
// (pointer and touch) or the answer typed as a bot would print it. The
// server judges it as it judges a bot's answer.
//
// Each built-in game's moves, as answers:
//   - Tanks: move or shoot in four directions ([{"Type":0|1,"Direction":D}],
//     Up 0, Down 1, Left 2, Right 3), or stay ([]).
//   - Snake: turn: the cell next to the head ({"X": row, "Y": column}).
//   - Pac-Man: the Pac-Man's move, or the three ghosts' at once
//     ({"role":R,"action":"…"}: 0 stay, 1 up, 2 left, 3 down, 4 right,
//     as the board is drawn).
// A logic game's own player may send moves: {type: "arena:move", answer}
// by postMessage from its frame (see the viewer), once it has said it
// takes input with {type: "arena:input"}; it is told each question with
// {type: "arena:ask", turn, input, deadline, seat}.
import { api } from "./session.js";

const $ = (sel) => document.querySelector(sel);

// The directions the keys and the pad name, as the board shows them.
const DIRS = ["up", "down", "left", "right"];
const ARROWS = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
const GLYPH = { up: "↑", down: "↓", left: "←", right: "→", stay: "·" };
const TANK_DIR = { up: 0, down: 1, left: 2, right: 3 };
const PACMAN_ACTION = { stay: 0, up: 1, left: 2, down: 3, right: 4 };

export class PersonSeat {
  constructor() {
    this.match = null;
    this.asked = null; // the question: {turn, input, deadline}
    this.ghosts = [0, 0, 0]; // the ghosts' moves chosen so far
    this.ghost = 0; // the ghost the keys set next
    this.shoot = false;
    document.addEventListener("keydown", (e) => this.key(e));
    $("#play-typed").addEventListener("submit", (e) => {
      e.preventDefault();
      this.send($("#play-answer").value);
    });
    setInterval(() => this.status(), 250);
  }

  // playing says whether the person plays a seat of the match shown.
  playing() {
    return !!this.match;
  }

  // start plays seat of match m (the viewer's match); again for the same
  // match, nothing.
  start(m, seat) {
    if (this.match && this.match.id === m.id) return;
    this.stop();
    this.match = { id: m.id, game: m.game, seat };
    this.asked = null;
    this.error = "";
    this.pad();
    $("#play-panel").hidden = false;
    this.poll(this.match, 0);
  }

  stop() {
    this.match = null;
    this.asked = null;
    $("#play-panel").hidden = true;
  }

  // poll waits for each question of the seat until the match is over.
  async poll(match, after) {
    while (this.match === match) {
      let st;
      try {
        st = await api(`/api/matches/${match.id}/moves?after=${after}`);
      } catch (e) {
        if (this.match !== match) return;
        this.error = e.message;
        this.status();
        if (e.status === 409 || e.status === 403 || e.status === 404) return this.over();
        await new Promise((r) => setTimeout(r, 2000));
        continue;
      }
      if (this.match !== match) return;
      if (st.over) return this.over();
      if (st.turn > after) {
        after = st.turn;
        this.ask(st);
      }
    }
  }

  ask(st) {
    this.asked = { turn: st.turn, input: st.input || "", deadline: st.deadline ? Date.parse(st.deadline) : 0 };
    this.turnMS = st.turn_ms;
    this.ghosts = [0, 0, 0];
    this.ghost = 0;
    this.error = "";
    this.pad();
    this.status();
    if (this.onAsk) this.onAsk({ turn: st.turn, input: st.input || "", deadline: st.deadline, seat: this.match.seat });
  }

  over() {
    this.asked = null;
    $("#play-status").textContent = "The match is over.";
    $("#play-pad").replaceChildren();
    this.match = null;
  }

  // status says whose move it is, and the time left.
  status() {
    if (!this.match) return;
    const el = $("#play-status");
    if (!this.asked) {
      el.textContent = this.error || "The bots are moving…";
      return;
    }
    const left = Math.max(0, Math.ceil((this.asked.deadline - Date.now()) / 1000));
    let text = `Your move: turn ${this.asked.turn}, ${left} s left.`;
    if (this.isGhosts()) text += ` Ghost ${this.ghost + 1}'s move next (${this.ghosts.map((a, i) => `${i + 1}: ${GLYPH[actionName(a)]}`).join(", ")}).`;
    if (this.error) text += " " + this.error;
    el.textContent = text;
    el.classList.toggle("urgent", left <= 5);
  }

  isGhosts() {
    return this.match && this.match.game === "pacman" && this.match.seat === 1;
  }

  // send sends the answer of the turn asked.
  async send(answer) {
    if (!this.match || !this.asked) return;
    const turn = this.asked.turn;
    this.asked = null;
    this.status();
    try {
      await api(`/api/matches/${this.match.id}/moves`, { method: "POST", body: JSON.stringify({ turn, answer }) });
      $("#play-answer").value = "";
    } catch (e) {
      this.error = e.message;
      this.status();
    }
  }

  // move sends the game's answer for a direction ("stay" too).
  move(dir) {
    if (!this.match || !this.asked) return;
    const game = this.match.game;
    if (game === "tanks") {
      if (dir === "stay") return this.send("[]");
      return this.send(JSON.stringify([{ Type: this.shoot ? 1 : 0, Direction: TANK_DIR[dir] }]));
    }
    if (game === "snake") {
      const me = lastJSON(this.asked.input);
      if (!me || dir === "stay") return;
      const [dx, dy] = { up: [-1, 0], down: [1, 0], left: [0, -1], right: [0, 1] }[dir];
      return this.send(JSON.stringify({ X: me.your_posx + dx, Y: me.your_posy + dy }));
    }
    if (game === "pacman") {
      if (!this.isGhosts()) return this.send(JSON.stringify({ role: 0, action: String(PACMAN_ACTION[dir]) }));
      this.ghosts[this.ghost] = PACMAN_ACTION[dir];
      this.ghost++;
      if (this.ghost < 3) return this.pad(), this.status();
      return this.sendGhosts();
    }
  }

  sendGhosts() {
    this.send(JSON.stringify({ role: 1, action: this.ghosts.join(" ") }));
  }

  // key plays the arrows (Shift: shoot, in Tanks), x or . to stay, and in
  // Pac-Man as the ghosts 1–3 to pick a ghost and Enter to send.
  key(e) {
    if (!this.match || $("#viewer").hidden) return;
    if (["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName) && document.activeElement.id !== "scrubber") return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    let dir = ARROWS[e.key];
    if (e.key === "x" || e.key === ".") dir = "stay";
    if (this.isGhosts() && ["1", "2", "3"].includes(e.key)) {
      this.ghost = Number(e.key) - 1;
      this.pad();
      this.status();
      e.preventDefault();
      e.stopImmediatePropagation();
      return;
    }
    if (this.isGhosts() && e.key === "Enter" && this.asked) {
      this.sendGhosts();
      e.preventDefault();
      return;
    }
    if (!dir) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const was = this.shoot;
    if (this.match.game === "tanks") this.shoot = e.shiftKey;
    this.move(dir);
    this.shoot = was;
  }

  // pad draws the game's buttons.
  pad() {
    const el = $("#play-pad");
    const game = this.match && this.match.game;
    const button = (dir, title) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `pad-${dir}`;
      b.textContent = GLYPH[dir];
      b.title = title || dir;
      b.setAttribute("aria-label", b.title);
      b.addEventListener("click", () => this.move(dir));
      return b;
    };
    const grid = () => {
      const g = document.createElement("div");
      g.className = "pad";
      g.append(...DIRS.map((d) => button(d, this.match.game === "tanks" ? `${this.shoot ? "shoot" : "move"} ${d}` : d)), button("stay", "stay"));
      return g;
    };
    const parts = [];
    $("#play-typed").hidden = false;
    if (game === "tanks") {
      const t = document.createElement("label");
      t.className = "pad-mode";
      t.innerHTML = `<input type="checkbox" id="play-shoot"${this.shoot ? " checked" : ""}> shoot`;
      t.querySelector("input").addEventListener("change", (e) => {
        this.shoot = e.target.checked;
        this.pad();
      });
      parts.push(grid(), t);
      $("#play-keys").textContent = "Keys: arrows move, Shift+arrows shoot, x stays.";
    } else if (game === "snake") {
      parts.push(grid());
      $("#play-keys").textContent = "Keys: arrows turn the snake's head.";
    } else if (game === "pacman") {
      parts.push(grid());
      if (this.isGhosts()) {
        const pick = document.createElement("div");
        pick.className = "ghosts";
        for (let i = 0; i < 3; i++) {
          const b = document.createElement("button");
          b.type = "button";
          b.textContent = `Ghost ${i + 1}: ${GLYPH[actionName(this.ghosts[i])]}`;
          b.setAttribute("aria-pressed", String(i === this.ghost));
          b.addEventListener("click", () => {
            this.ghost = i;
            this.pad();
          });
          pick.append(b);
        }
        const go = document.createElement("button");
        go.type = "button";
        go.textContent = "Send the three";
        go.addEventListener("click", () => this.sendGhosts());
        pick.append(go);
        parts.push(pick);
        $("#play-keys").textContent = "Keys: 1–3 pick a ghost, arrows set its move (the third sends all three), Enter sends, x stays.";
      } else {
        $("#play-keys").textContent = "Keys: arrows move the Pac-Man, x stays.";
      }
    } else {
      $("#play-keys").textContent = "Type your answer as a bot prints it, or play on the game's own board if it takes input.";
    }
    el.replaceChildren(...parts);
  }
}

// actionName is a Pac-Man action's direction.
function actionName(a) {
  return Object.keys(PACMAN_ACTION).find((k) => PACMAN_ACTION[k] === a) || "stay";
}

// lastJSON is the last line of input that is a JSON object (the state a
// bot would read), or null.
function lastJSON(input) {
  const lines = input.split("\n").filter((l) => l.trim().startsWith("{"));
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i]);
    } catch {
      // not JSON: an earlier line may be
    }
  }
  return null;
}
