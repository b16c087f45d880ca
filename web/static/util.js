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
// for each row of a long table takes a good part of a millisecond).
const dateTime = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "2-digit", second: "2-digit" });
export const localTime = (d) => dateTime.format(d instanceof Date ? d : new Date(d));

export function bytes(n) {
  if (n == null) return "n/a";
  if (n >= 1 << 30) return (n / (1 << 30)).toFixed(1) + " GiB";
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + " MiB";
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + " KiB";
  return n + " B";
}
