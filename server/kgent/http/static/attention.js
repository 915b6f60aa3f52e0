// Approvals you don't miss: while any approval on the page waits, the tab title says so and the favicon changes;
// a browser notification goes out for each new one when the person allowed notifications.

const $ = (id) => document.getElementById(id);
const TITLE = "Kgent";
const notified = new Set();
export const notifications = []; // what was shown (titles), for tests and debugging

export function setupNotify() {
  const b = $("notify");
  const offer = () => {
    b.hidden = !("Notification" in window) || Notification.permission !== "default";
  };
  offer();
  b.onclick = async () => {
    await Notification.requestPermission();
    offer();
  };
}

// Call after any approval card opens or closes.
export function refreshAttention() {
  const open = [...document.querySelectorAll(".approval:not(.closed)")];
  document.title = open.length ? `(${open.length}) waiting for you · ${TITLE}` : TITLE;
  $("favicon").href = open.length ? "/static/icon-waiting.svg" : "/static/icon.svg";
  document.body.dataset.waiting = open.length ? "yes" : "no";
  for (const box of open) {
    const id = box.dataset.requestId;
    if (notified.has(id)) continue;
    notified.add(id);
    if (!("Notification" in window) || Notification.permission !== "granted") continue;
    const title = "Kgent: waiting for you";
    const n = new Notification(title, { body: box.querySelector(".why")?.textContent || "", tag: id });
    n.onclick = () => {
      window.focus();
      box.scrollIntoView({ block: "center" });
    };
    notifications.push(title);
  }
}
