// Uploading a bot's source from My bots (POST /api/builds): a folder
// (picked, or dropped) is packed here into a .tar.gz, an archive is sent as
// it is; the server builds it with its kit's recipe in its sandbox, pushes
// it to the visitor's repository and checks it. The build's log is shown
// as it comes.
import { api, current } from "./session.js";

const $ = (sel) => document.querySelector(sel);

// Folders left out of an upload, as arena submit leaves them.
const skipped = new Set([".git", ".hg", ".svn", "__pycache__", ".idea", ".vscode", "node_modules/.cache"]);

// tarGz packs files ({name, file}) into a gzipped ustar archive.
export async function tarGz(files) {
  const enc = new TextEncoder();
  const parts = [];
  for (const { name, file } of files) {
    const data = new Uint8Array(await file.arrayBuffer());
    const header = new Uint8Array(512);
    let path = name, prefix = "";
    if (enc.encode(path).length > 100) {
      const cut = path.lastIndexOf("/", 155);
      if (cut <= 0 || enc.encode(path.slice(cut + 1)).length > 100) throw new Error(`${name}: a path too long for an archive`);
      prefix = path.slice(0, cut);
      path = path.slice(cut + 1);
    }
    const put = (s, at, len) => header.set(enc.encode(s).slice(0, len), at);
    const octal = (n, len) => n.toString(8).padStart(len - 1, "0") + "\0";
    put(path, 0, 100);
    put(octal(0o644, 8), 100, 8);
    put(octal(0, 8), 108, 8);
    put(octal(0, 8), 116, 8);
    put(octal(data.length, 12), 124, 12);
    put(octal(0, 12), 136, 12);
    put("        ", 148, 8); // the checksum, counted as spaces
    put("0", 156, 1);
    put("ustar\0", 257, 6);
    put("00", 263, 2);
    put(prefix, 345, 155);
    let sum = 0;
    for (const b of header) sum += b;
    put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
    parts.push(header, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  const stream = new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"));
  return new Response(stream).blob();
}

// entries walks dropped items: a folder's files with their paths inside
// it, or the files themselves.
async function dropped(items) {
  const out = [];
  const walk = async (entry, path) => {
    if (entry.isFile) {
      const file = await new Promise((ok, fail) => entry.file(ok, fail));
      out.push({ name: path + entry.name, file });
    } else if (entry.isDirectory && !skipped.has(entry.name)) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
        if (!batch.length) break;
        for (const e of batch) await walk(e, path + entry.name + "/");
      }
    }
  };
  const plain = [];
  for (const item of items) {
    if (item.kind !== "file") continue;
    const entry = item.webkitGetAsEntry ? item.webkitGetAsEntry() : null;
    if (entry && entry.isDirectory) await walk(entry, "");
    else plain.push(item.getAsFile());
  }
  for (const f of plain) if (f) out.push({ name: f.name, file: f });
  return out;
}

const isArchive = (name) => /\.(zip|tar\.gz|tgz)$/i.test(name);

export class Uploader {
  constructor(games, done) {
    this.done = done;
    this.setGames(games);
    $("#upload-form").addEventListener("submit", (e) => {
      e.preventDefault();
      this.fromInputs();
    });
    const drop = $("#upload-drop");
    drop.addEventListener("dragover", (e) => {
      e.preventDefault();
      drop.classList.add("over");
    });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", async (e) => {
      e.preventDefault();
      drop.classList.remove("over");
      try {
        this.send(await dropped([...e.dataTransfer.items]));
      } catch (err) {
        this.say(err.message);
      }
    });
  }

  // setGames takes the games on offer now.
  setGames(games) {
    const keep = $("#upload-game").value;
    $("#upload-game").replaceChildren(...games.map((g) => new Option(g.title ? `${g.title} (${g.name})` : g.name, g.name)));
    if (games.some((g) => g.name === keep)) $("#upload-game").value = keep;
  }

  // followCheck follows the pushed version's check in the log: My bots
  // reads the registry again while a check is pending and hands each
  // reading to checked.
  followCheck(b) {
    this.following = { b, log: `build ${b.id} of ${b.reference}: ${b.state}\n${b.log}` };
    this.done();
  }

  // checked takes a reading of the registry (GET /api/registry): the
  // followed version's check, its state and why, goes on the log until
  // it is ready or rejected.
  checked(reg) {
    if (!this.following) return;
    const { b, log } = this.following;
    const img = reg.images.find((i) => i.repository === b.repository && i.tag === b.tag && i.digest === b.digest);
    const state = img ? img.state || "pending" : "pending";
    const why = img && img.reason ? `: ${img.reason}` : "";
    this.say(`${log}check: ${state}${why}` + (state === "pending" ? " (a short match against the game's example bot)…" : "\n"));
    if (state !== "pending") {
      $("#upload-log").dataset.check = state;
      this.following = null;
    }
  }

  say(text) {
    $("#upload-log").hidden = false;
    $("#upload-log").textContent = text;
  }

  // fromInputs sends the archive picked, else the folder picked.
  fromInputs() {
    const archive = $("#upload-archive").files[0];
    if (archive) return this.send([{ name: archive.name, file: archive }]);
    const folder = [...$("#upload-folder").files];
    if (!folder.length) return this.say("pick a folder or an archive, or drop one here");
    // A picked folder's files are named with it: the server steps into it.
    this.send(folder.map((f) => ({ name: f.webkitRelativePath || f.name, file: f })).filter((f) => !f.name.split("/").some((p) => skipped.has(p))));
  }

  async send(files) {
    if (!files.length) return this.say("nothing to upload");
    const repo = $("#upload-repo").value.trim() || `${current().user ? current().user.name : "you"}/bot`;
    const q = new URLSearchParams({ repository: repo, tag: $("#upload-tag").value.trim() || "latest", game: $("#upload-game").value });
    if ($("#upload-kit").value) q.set("kit", $("#upload-kit").value);
    if ($("#upload-bot").value.trim()) q.set("bot", $("#upload-bot").value.trim());
    let body, type;
    if (files.length === 1 && isArchive(files[0].name)) {
      body = files[0].file;
      type = /\.zip$/i.test(files[0].name) ? "application/zip" : "application/gzip";
    } else {
      this.say(`packing ${files.length} files…`);
      body = await tarGz(files);
      type = "application/gzip";
    }
    $("#upload-start").disabled = true;
    try {
      let b = await api("/api/builds?" + q, { method: "POST", body, headers: { "Content-Type": type } });
      this.say(`build ${b.id} of ${b.reference}: ${b.state}\n`);
      while (b.state === "queued" || b.state === "building") {
        await new Promise((ok) => setTimeout(ok, 700));
        b = await api(`/api/builds/${b.id}`);
        this.say(`build ${b.id} of ${b.reference}: ${b.state}\n${b.log}`);
      }
      $("#upload-log").dataset.state = b.state;
      delete $("#upload-log").dataset.check;
      if (b.state === "failed") this.say(`build ${b.id} of ${b.reference} failed: ${b.error}\n${b.log}`);
      if (b.state === "pushed") this.followCheck(b);
      else this.done();
    } catch (err) {
      this.say(err.message);
    } finally {
      $("#upload-start").disabled = false;
    }
  }
}
