// Notifications: the header's bell (how many are unread), the list
// (#/notifications) and the webhook on the account page.
import { api, current, onChange, signedIn } from "./session.js";
import { escapeHTML, localTime } from "./util.js";

const $ = (sel) => document.querySelector(sel);

// refreshEvery is how often the bell asks for what is new.
const refreshEvery = 30000;

export class Notifications {
  constructor() {
    $("#notifications-read").addEventListener("click", () => this.markRead([]));
    $("#notification-list").addEventListener("click", (e) => {
      const li = e.target.closest("li[data-id]");
      if (li && li.classList.contains("unread")) this.markRead([Number(li.dataset.id)]);
    });
    $("#webhook-form").addEventListener("submit", (e) => this.setWebhook(e));
    $("#webhook-remove").addEventListener("click", () => this.removeWebhook());
    onChange(() => this.refresh());
    setInterval(() => {
      if (!document.hidden) this.refresh();
    }, refreshEvery);
  }

  // refresh counts the unread notifications on the bell (and redraws the
  // list when it is shown).
  async refresh() {
    // A local server has no accounts, so no notifications.
    const any = signedIn() && current().mode !== "local";
    $("#bell").hidden = !any;
    if (!any) return;
    try {
      const got = await api("/api/notifications");
      const count = $("#bell-count");
      count.textContent = got.unread;
      count.hidden = got.unread === 0;
      $("#bell").title = got.unread ? `${got.unread} unread notification${got.unread === 1 ? "" : "s"}` : "Notifications";
      if (!$("#notifications").hidden) this.draw(got.notifications);
    } catch (e) {
      console.error("notifications:", e);
    }
  }

  // open shows the list, or hides it.
  open(show) {
    $("#notifications").hidden = !show;
    if (show) this.refresh();
  }

  draw(list) {
    $("#notification-list").replaceChildren(
      ...(list.length ? list : [null]).map((n) => {
        const li = document.createElement("li");
        if (!n) {
          li.className = "hint";
          li.textContent = "Nothing yet: you are told here when a version of yours is checked, a challenge is over, a contest's deadline passes or its standings are final, you are invited into a team, or an entry faults.";
          return li;
        }
        li.dataset.id = n.id;
        li.className = n.read ? "" : "unread";
        const text = escapeHTML(n.text);
        li.innerHTML = `${n.link ? `<a href="${escapeHTML(n.link)}">${text}</a>` : text}<br><small class="hint">${escapeHTML(localTime(n.at))}</small>`;
        return li;
      }),
    );
  }

  async markRead(ids) {
    try {
      await api("/api/notifications/read", { method: "POST", body: JSON.stringify(ids.length ? { ids } : {}) });
    } catch (e) {
      $("#notifications-error").textContent = e.message;
    }
    this.refresh();
  }

  // loadWebhook shows the account's webhook and its latest calls.
  async loadWebhook() {
    if (!signedIn()) return;
    try {
      const w = await api("/api/me/webhook");
      $("#webhook-current").hidden = !w.url;
      $("#webhook-url-now").textContent = w.url;
      $("#webhook-deliveries").hidden = !w.deliveries.length;
      $("#webhook-deliveries tbody").replaceChildren(
        ...w.deliveries.map((d) => {
          const tr = document.createElement("tr");
          const state = d.state === "delivered" ? `<span class="good">delivered</span>` : d.state === "failed" ? `<span class="bad">failed</span>` : "trying";
          tr.innerHTML = `<td>${escapeHTML(localTime(d.at))}</td><td>${state}</td><td>${d.attempts}</td><td>${escapeHTML(d.error || (d.status ? String(d.status) : ""))}</td>`;
          return tr;
        }),
      );
    } catch (e) {
      $("#webhook-error").textContent = e.message;
    }
  }

  async setWebhook(ev) {
    ev.preventDefault();
    $("#webhook-error").textContent = "";
    try {
      const got = await api("/api/me/webhook", { method: "PUT", body: JSON.stringify({ url: $("#webhook-url").value.trim() }) });
      $("#webhook-secret").textContent = got.secret;
      $("#webhook-new").hidden = false;
      $("#webhook-url").value = "";
      this.loadWebhook();
    } catch (e) {
      $("#webhook-error").textContent = e.message;
    }
  }

  async removeWebhook() {
    try {
      await api("/api/me/webhook", { method: "DELETE" });
      $("#webhook-new").hidden = true;
      this.loadWebhook();
    } catch (e) {
      $("#webhook-error").textContent = e.message;
    }
  }
}
