/**
 * Orbit's web UI: a hash router over two views (the schedules list at `#/`, one schedule at
 * `#/schedules/<id>`) and the auto-refresh. Static files, no build step; the API is same-origin.
 */
import { say } from "./actions.js";
import { detailView } from "./detail.js";
import { listView } from "./list.js";

const REFRESH_MS = 5000;

let current = null;
let timer = null;

function viewFor(hash) {
  const m = /^#\/schedules\/(.+)$/.exec(hash);
  if (m) return detailView(decodeURIComponent(m[1]));
  return listView();
}

async function refresh() {
  if (current === null) return;
  const view = current;
  try {
    await view.refresh();
    if (view !== current) return;
    document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = "true";
  } catch (err) {
    say(`could not refresh: ${err}`, "error");
  }
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(async () => {
    const auto = document.getElementById("auto-refresh").checked;
    // Not while a dialog asks something: the refresh would not disturb it, but it is pointless work.
    if (auto && !document.hidden && document.querySelector("dialog[open]") === null) await refresh();
    schedule();
  }, REFRESH_MS);
}

async function route() {
  const main = document.getElementById("main");
  current = viewFor(location.hash);
  document.title = `${current.title} · Orbit`;
  delete document.body.dataset.loaded;
  main.replaceChildren(current.el);
  await refresh();
  schedule();
}

window.addEventListener("hashchange", () => {
  void route().then(() => document.getElementById("main").focus({ preventScroll: true }));
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) void refresh();
});
void route();
