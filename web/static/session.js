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
  const res = await fetch(path, { ...options, headers });
  const body = res.status === 204 ? {} : await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.error || `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

// load asks the server who the visitor is, and tells every listener.
export async function load() {
  me = await api("/api/me");
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
