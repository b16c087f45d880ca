// Suggestions for the bot fields: the local images one may play that fit
// the game
// (GET /api/images?game=G: the game's own, labelled io.arena.game, then
// the unlabelled), each with its short id and age, in a <datalist> per
// game. The list is fetched when a field of that game gets the focus, at
// most every ten seconds, so a freshly built image shows up.

import { current } from "./session.js";

const REFRESH_MS = 10000;

// age is how long ago a time was, in the largest whole unit.
export function age(iso, now = Date.now()) {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export class ImageSuggestions {
  constructor(api) {
    this.api = api;
    this.fetched = {}; // game → time of the last fetch
  }

  list(game) {
    const id = `images-${game}`;
    let dl = document.getElementById(id);
    if (!dl) {
      dl = document.createElement("datalist");
      dl.id = id;
      document.body.append(dl);
    }
    return dl;
  }

  // attach makes input suggest game's images (again, for another game).
  attach(input, game) {
    input.setAttribute("list", this.list(game).id);
    input.dataset.game = game;
    if (!input.dataset.suggests) {
      input.dataset.suggests = "yes";
      input.addEventListener("focus", () => this.refresh(input.dataset.game));
    }
    this.refresh(game);
  }

  async refresh(game) {
    const me = current();
    if (me.mode !== "local" && !me.user) return; // nothing to play yet
    const now = Date.now();
    if (this.fetched[game] && now - this.fetched[game] < REFRESH_MS) return;
    this.fetched[game] = now;
    try {
      const body = await this.api(`/api/images?game=${encodeURIComponent(game)}`);
      const options = body.images.map((img) => {
        const o = document.createElement("option");
        o.value = img.image;
        const short = img.id.replace(/^sha256:/, "").slice(0, 12);
        o.label = `${short} · ${age(img.created_at)}` + (img.game ? "" : " · no game label");
        return o;
      });
      this.list(game).replaceChildren(...options);
    } catch (e) {
      console.error("images:", e);
    }
  }
}
