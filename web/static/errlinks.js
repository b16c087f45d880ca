// Where a build's log or a bot's stderr points into a draft: the
// "file:line[:column]" of Go's compiler and panics, g++ and Node.js
// (a message, or a stack trace's "at … (file:line:column)"), and
// Python's `File "…", line N`, each mapped back to the draft's file.
// A draft's files are built in a folder of their own (./bot.cpp,
// /tmp/src/bot.cpp) and kept under /bot/ in the built image; a Go
// binary built with -trimpath names its files by module path
// (arena-botkit/bot/main.go). What points elsewhere (a library's file,
// the interpreter's) is no link. Pure: no page, no DOM; the editor
// makes the links (editor.js), node --test checks this module
// (web/jstest/errlinks.test.mjs).

// ROOTS are the folders a draft's files are in when built or run.
const ROOTS = ["/bot/", "/tmp/src/", "/src/"];

// PYTHON is a Python traceback's frame: File "/bot/bot.py", line 12.
const PYTHON = /File "([^"\n]+)", line (\d+)/g;

// AT_LINE is a source file's name with its line, and maybe its column:
// ./bot.cpp:12:5, bot/main.go:3:2, /bot/bot.js:12:7, file:///bot/bot.js:1.
// The name must end in a source file's extension, so that a time
// (12:30:45) or an address is never read as one.
const AT_LINE = /((?:file:\/\/)?[\w./@+-]*?[\w@+-]+\.(?:go|c|cc|cpp|cxx|h|hh|hpp|hxx|py|js|mjs|cjs))(?::(\d+))(?::(\d+))?/g;

// draftPath is the draft's file that a path in a log names, or null.
// paths are the draft's files' paths (relative, e.g. "snake/snake_main.cpp").
export function draftPath(ref, paths) {
  const has = (p) => (paths instanceof Set ? paths.has(p) : paths.includes(p));
  const plain = (p) => p.replace(/^(?:\.\/)+/, "");
  let p = plain(ref.replace(/^file:\/\//, ""));
  if (has(p)) return p;
  for (const root of ROOTS) {
    if (p.startsWith(root) && has(plain(p.slice(root.length)))) return plain(p.slice(root.length));
  }
  if (p.startsWith("/")) return null; // a file outside the draft's folders
  // A module path (Go's -trimpath): the longest draft path it ends with.
  let best = null;
  for (const d of paths) {
    if (p.endsWith("/" + d) && (!best || d.length > best.length)) best = d;
  }
  return best;
}

// findLinks lists the places in text that point into the draft: each
// {start, end, path, line, col} (start and end: offsets in text; line
// and col from 1, col 0 when not given), in order, none overlapping.
export function findLinks(text, paths) {
  const found = [];
  for (const m of text.matchAll(PYTHON)) {
    const path = draftPath(m[1], paths);
    if (path) found.push({ start: m.index, end: m.index + m[0].length, path, line: Number(m[2]), col: 0 });
  }
  for (const m of text.matchAll(AT_LINE)) {
    const path = draftPath(m[1], paths);
    if (path) found.push({ start: m.index, end: m.index + m[0].length, path, line: Number(m[2]), col: m[3] ? Number(m[3]) : 0 });
  }
  found.sort((a, b) => a.start - b.start);
  const out = [];
  for (const l of found) if (l.line > 0 && (!out.length || l.start >= out[out.length - 1].end)) out.push(l);
  return out;
}

// segments cuts text into its plain parts ({text}) and its links
// ({text, link: {path, line, col}}), in order: what the page shows.
export function segments(text, paths) {
  const out = [];
  let at = 0;
  for (const l of findLinks(text, paths)) {
    if (l.start > at) out.push({ text: text.slice(at, l.start) });
    out.push({ text: text.slice(l.start, l.end), link: { path: l.path, line: l.line, col: l.col } });
    at = l.end;
  }
  if (at < text.length) out.push({ text: text.slice(at) });
  return out;
}
