// Who is here: the server's mode (local, or accounts) and the visitor
// (GET /api/me), the one api() every part of the page calls, and who may
// change what — the page shows a button only where the server would
// allow its request (the server decides either way).

let me = { mode: "local", user: null };
const listeners = [];

// api calls the JSON API. The session cookie goes with every request of
// this origin; in local mode with ARENA_TOKEN, the token typed once is
// sent too.
export async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if (options.body !== undefined && !headers["Content-Type"]) headers["Content-Type"] = "application/json";
  const token = localStorage.getItem("arena-token");
  if (token && me.mode === "local") headers.Authorization = "Bearer " + token;
  const done = options.method && options.method !== "GET" ? working() : () => {};
  let res;
  try {
    res = await fetch(path, { ...options, headers });
  } finally {
    done();
  }
  const body = res.status === 204 ? {} : await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.error || `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

let actions = 0;

// working shows, from 300 ms on, that an action is under way: the button
// that asked for it (or its form's) is busy and the header says
// "working…". It returns the function that ends it.
export function working() {
  const el = document.activeElement;
  const form = el && el.closest ? el.closest("form") : null;
  const button = el && el.tagName === "BUTTON" ? el : form ? form.querySelector("button[type=submit], button:not([type])") : null;
  let was = null;
  actions++;
  const timer = setTimeout(() => {
    document.body.classList.add("working");
    if (button) {
      was = button.disabled;
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
    }
  }, 300);
  return () => {
    clearTimeout(timer);
    if (--actions === 0) document.body.classList.remove("working");
    if (button && was !== null) {
      button.disabled = was;
      button.removeAttribute("aria-busy");
    }
  };
}

// load asks the server who the visitor is, and tells every listener;
// first, when given, is told before them (a match's page starts its
// stream before the views redraw for the visitor).
export async function load(first) {
  me = await api("/api/me");
  if (first) first(me);
  for (const f of listeners) f(me);
  return me;
}

// onChange calls f now and whenever who is here changes.
export function onChange(f) {
  listeners.push(f);
  f(me);
}

export function current() {
  return me;
}

export function signedIn() {
  return !!me.user;
}

export function isAdmin() {
  return !!me.user && me.user.role === "admin";
}

// owns says whether a thing of owner is the visitor's own (theirs or one
// of their teams').
export function owns(owner) {
  return !!me.user && !!owner && (owner === me.user.name || me.user.teams.includes(owner));
}

// canChange says whether the visitor may pause, remove, rename or cancel
// a thing of owner.
export function canChange(owner) {
  return isAdmin() || owns(owner);
}
