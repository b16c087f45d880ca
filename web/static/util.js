// Small helpers of the page (the form, the history and the viewer).

export function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// The bots' ids in a match, as the platform gives them: the image as
// entered, with #2, #3… when an image plays more than once.
export function botIds(images) {
  const seen = {};
  return images.map((img) => {
    seen[img] = (seen[img] || 0) + 1;
    return seen[img] > 1 ? `${img}#${seen[img]}` : img;
  });
}

// localTime is a date and time as the visitor's locale writes them (as
// Date's toLocaleString does, with one formatter made once: making one
// for each row of a long table takes a good part of a millisecond, the
// first several: it is made when first needed, not as the page starts).
let dateTime = null;
export function localTime(d) {
  dateTime ??= new Intl.DateTimeFormat(undefined, { year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "2-digit", second: "2-digit" });
  return dateTime.format(d instanceof Date ? d : new Date(d));
}

export function bytes(n) {
  if (n == null) return "n/a";
  if (n >= 1 << 30) return (n / (1 << 30)).toFixed(1) + " GiB";
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + " MiB";
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + " KiB";
  return n + " B";
}

// SLICE_MS is how long follow reads a stream before it lets the page do
// other work.
const SLICE_MS = 8;

// yieldToPage resolves in a later task, after the page had the chance to
// handle input and paint. Not scheduler.yield: its continuation goes
// before the page's next paint (the first board waited up to 100 ms
// longer for it in Chromium).
const yieldToPage = () => new Promise((r) => setTimeout(r, 0));

// follow reads a Server-Sent Events stream with fetch: on[type](data, id)
// for each event. A finished match's frames come in one burst, and
// EventSource would dispatch each as an event of its own within one long
// task; here the body is split SLICE_MS at a time (within a chunk too, up
// to a megabyte) and its events only queued by their handlers. Like
// EventSource, it resumes after the last id when the connection drops
// before the server closed the stream with an "end"; an answer other than
// 200 stops it and calls failed(status). It returns a function that stops
// it.
export function follow(url, on, failed) {
  let stopped = false;
  let lastId = "";
  let ctl = null;
  const dispatch = (block) => {
    let type = "message";
    let data = null;
    for (const line of block.split("\n")) {
      if (!line || line[0] === ":") continue;
      const c = line.indexOf(":");
      const field = c < 0 ? line : line.slice(0, c);
      let value = c < 0 ? "" : line.slice(c + 1);
      if (value[0] === " ") value = value.slice(1);
      if (value.endsWith("\r")) value = value.slice(0, -1);
      if (field === "event") type = value;
      else if (field === "id") lastId = value;
      else if (field === "data") data = data == null ? value : data + "\n" + value;
    }
    if (data != null && on[type]) on[type](data, lastId);
    if (type === "end") stopped = true;
  };
  const run = async () => {
    while (!stopped) {
      ctl = new AbortController();
      try {
        const res = await fetch(url, { headers: lastId ? { "Last-Event-ID": lastId } : {}, signal: ctl.signal, cache: "no-store" });
        if (res.status !== 200) {
          stopped = true;
          if (failed) failed(res.status);
          return;
        }
        const reader = res.body.getReader();
        const text = new TextDecoder();
        let buf = "";
        // The chunks of a body already here come one promise after the
        // other, all in one task: once the reader has had the page's
        // thread for a slice (due), it lets the page paint (pause).
        let since = performance.now();
        const due = () => performance.now() - since > SLICE_MS;
        const pause = async () => {
          await yieldToPage();
          since = performance.now();
        };
        for (;;) {
          if (due()) await pause();
          const { value, done } = await reader.read();
          if (done || stopped) {
            if (!done) reader.cancel().catch(() => {});
            break;
          }
          buf += text.decode(value, { stream: true });
          let from = 0;
          let i;
          while (!stopped && (i = buf.indexOf("\n\n", from)) >= 0) {
            dispatch(buf.slice(from, i));
            from = i + 2;
            // A chunk may be a megabyte, hundreds of events: the page
            // is let paint within it too.
            if (due()) {
              buf = buf.slice(from);
              from = 0;
              await pause();
            }
          }
          buf = buf.slice(from);
        }
      } catch {
        // A dropped connection: tried again below.
      }
      if (!stopped) await new Promise((r) => setTimeout(r, 2000));
    }
  };
  run();
  return () => {
    stopped = true;
    if (ctl) ctl.abort();
  };
}
