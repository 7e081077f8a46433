// @ts-check
/**
 * Orbit's web UI: a hash router over the pages and the auto-refresh. Static files, no build step;
 * the API is same-origin. Pages: schedules `#/` (filters in the query: `#/?q=…`), one schedule
 * `#/schedules/<id>`, executions `#/executions`, one execution `#/executions/<id>`, workflows
 * `#/workflows[/<name>]`, workers `#/workers`, sign-in `#/signin`.
 */
import { sayCarried, sayRefreshFailed } from "./actions.js";
import { getToken, hooks } from "./api.js";
import {
  assumeIdentity,
  currentIdentity,
  loadIdentity,
  signInView,
  signOut,
  unauthenticatedReason,
  workerRefusal,
} from "./auth.js";
import { detailView } from "./detail.js";
import { byId, h, iso, shownText } from "./dom.js";
import { executionsView, executionView } from "./executions.js";
import { tickRelative, viewerZone } from "./format.js";
import { listView } from "./list.js";
import { workersView, workflowsView } from "./workflows.js";

const REFRESH_MS = 5000;
/** How often the relative times ("in 8s") are counted again from the browser's clock. */
const TICK_MS = 1000;

/**
 * A page. `stopped()` says there is nothing more to ask (a 404 for the page's own schedule or
 * execution): the auto-refresh then leaves it alone until it is opened again (a reload or a
 * navigation makes a new view). A missing schedule's page asked again every 5 s, 15 requests in
 * 11 s, each a 404 in the console (a tester).
 * @typedef {{el: HTMLElement, refresh: () => Promise<void>, title: string, stopped?: () => boolean}} View
 */

/** @type {View | null} */
let current = null;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
/** Why the sign-in page is shown (the server's 401, a worker's token refused); null: no reason given. @type {import("./auth.js").SignInReason | null} */
let signInReason = null;

/**
 * @param {string} hash
 * @returns {View}
 */
function viewFor(hash) {
  const [path = "", search = ""] = hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(search);
  // A bare `%` (`#/executions/x%`) made decodeURIComponent throw: a blank page, or the last page
  // left up under the new URL. Each id below is a suffix of the path cut after a literal `/`, so it
  // decodes whenever the whole path does.
  try {
    decodeURIComponent(path);
  } catch {
    return notFoundView(path);
  }
  const m = (/** @type {RegExp} */ re) => {
    const r = re.exec(path);
    return r ? decodeURIComponent(r[1] ?? "") : null;
  };
  if (path === "/signin") return signInView(signInReason, params.get("next"));
  const schedule = m(/^\/schedules\/(.+)$/);
  if (schedule !== null) return detailView(schedule);
  const execution = m(/^\/executions\/(.+)$/);
  if (execution !== null) return executionView(execution);
  if (path === "/executions") return executionsView(params);
  const workflow = m(/^\/workflows\/(.+)$/);
  if (workflow !== null) return workflowsView(workflow);
  if (path === "/workflows") return workflowsView(null);
  if (path === "/workers") return workersView();
  if (path === "" || path === "/") return listView(params);
  return notFoundView(path);
}

/**
 * A page this UI does not have (a mistyped or outdated link): it showed the list, as if the link
 * had worked.
 * @param {string} path
 * @returns {View}
 */
function notFoundView(path) {
  const el = h(
    "div",
    { class: "not-found" },
    h("h1", { text: "Page not found" }),
    h("p", { class: "alert", role: "alert" }, "This UI has no page ", h("code", { text: `#${path}` }), "."),
    h("p", {}, h("a", { href: "#/", text: "Go to all schedules" })),
  );
  return { el, refresh: async () => {}, title: "Not found" };
}

async function refresh() {
  if (current === null || current.stopped?.()) return;
  const view = current;
  try {
    await view.refresh();
    if (view !== current) return;
    // The server answers again: a "could not refresh" of an earlier round no longer holds.
    for (const stale of byId("status").querySelectorAll("p[data-refresh]")) stale.remove();
    updatedAt(new Date());
    document.body.dataset.loaded = "true";
  } catch (err) {
    // A page since left (its reads refused with 401 while the sign-in page opened) says nothing.
    if (view !== current) return;
    sayRefreshFailed(err);
    document.body.dataset.loaded = "true";
  }
}

/**
 * The top bar's "updated 19:51:10 CET": the last refresh that succeeded, in the viewer's time with
 * its zone named, as every local time of the UI is ("local: … GMT+1", "Yours (Europe/Berlin)"); a
 * bare "5:18:26 AM" stood beside the UTC instants of the page. The UTC instant is its title.
 * @param {Date} at
 */
function updatedAt(at) {
  const el = byId("updated");
  el.textContent = `updated ${at.toLocaleTimeString(undefined, { timeZoneName: "short" })}`;
  el.title = `The last refresh that succeeded: ${at.toISOString()} (your time zone: ${viewerZone()})`;
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(async () => {
    const auto = byId("auto-refresh").checked;
    // Not while a dialog asks something: the refresh would not disturb it, but it is pointless work.
    // But while one waits for work it sent (a backfill of a minute and more), the page behind
    // shows that work's executions arriving: it stood still.
    const asking = document.querySelector("dialog[open]:not([data-refresh-behind])") !== null;
    if (auto && !document.hidden && !asking) await refresh();
    schedule();
  }, REFRESH_MS);
}

/** The signed-in identity in the top bar, with a sign-out button when a token is kept. */
function renderIdentity() {
  const box = byId("identity");
  const me = currentIdentity();
  // An open server names nobody (`name: null`) and needs no token: nothing to say or sign out of.
  if (getToken() === null || (me !== null && me.name === null)) {
    box.replaceChildren(me === null ? h("a", { href: "#/signin", text: "Sign in" }) : "");
    return;
  }
  box.replaceChildren(
    me === null ? "" : h("span", { class: "muted small", text: `signed in as ${iso(me.name)}` }),
    " ",
    h("button", {
      type: "button",
      id: "sign-out",
      class: "button small",
      text: "Sign out",
      onclick: () => {
        signOut();
        location.hash = "#/signin";
      },
    }),
  );
}

/** The sign-in page, told to come back to the page shown now (`#/signin?next=/executions/x`). */
function signInHash() {
  const here = location.hash.replace(/^#/, "");
  // Both the 401 hook and the router send here: the second keeps what the first wrote.
  if (here.startsWith("/signin")) return location.hash;
  return here === "" || here === "/" ? "#/signin" : `#/signin?${new URLSearchParams({ next: here })}`;
}

/**
 * Whether `me` may see the pages; otherwise sends the tab to the sign-in page, saying why.
 * @param {import("./auth.js").Identity | null} me
 */
function admitted(me) {
  if (me === null) {
    signInReason = signInReason ?? unauthenticatedReason("");
    location.replace(signInHash());
    return false;
  }
  // A worker's token kept from before the sign-in page refused them: every page answered 403.
  if (me.kind === "worker") {
    signInReason = { lead: workerRefusal(me.name), server: null };
    signOut();
    location.replace(signInHash());
    return false;
  }
  // Signed in: a reason said before (a worker's token refused) is not for a later sign-out.
  signInReason = null;
  return true;
}

/** Which route() is the latest: one that waited while the hash changed again stops. */
let routed = 0;

async function route() {
  const mine = ++routed;
  const main = byId("main");
  delete document.body.dataset.loaded;
  // A new page starts with an empty status line, but for what the last page handed over.
  sayCarried();
  /** The /v1/me asked beside the page's first reads, when the page need not wait for it. */
  let asking = null;
  if (!location.hash.startsWith("#/signin")) {
    if (assumeIdentity() === null) {
      // Said at once: on a slow link the last page (or nothing) stood until /v1/me answered.
      main.replaceChildren(h("p", { class: "muted loading", text: "Loading…" }));
      const me = await loadIdentity();
      if (mine !== routed || !admitted(me)) return;
    } else asking = loadIdentity();
  }
  renderIdentity();
  current = viewFor(location.hash);
  document.title = shownText(`${current.title} · Orbit`);
  main.replaceChildren(current.el);
  for (const a of document.querySelectorAll("nav[aria-label=Main] a")) {
    const href = a.getAttribute("href") ?? "";
    const here = location.hash.replace(/\?.*$/, "") || "#/";
    const on = href === "#/" ? here === "#/" || here.startsWith("#/schedules") : here.startsWith(href);
    if (on) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const first = refresh();
  if (asking !== null) {
    const me = await asking;
    if (mine !== routed || !admitted(me)) return;
    renderIdentity();
  }
  await first;
  schedule();
}

hooks.unauthenticated = (err) => {
  signInReason = unauthenticatedReason(err.message);
  if (!location.hash.startsWith("#/signin")) {
    signOut();
    location.hash = signInHash();
  }
};

/** The hash changes on every link; the filter forms use replaceState, which fires no event. */
window.addEventListener("hashchange", () => {
  void route().then(() => byId("main").focus({ preventScroll: true }));
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) void refresh();
});
void route();
// Relative times count on between refreshes and while the server is down: drawn from the server's
// answers alone, "in 8s" still read so 14 s later, the fire long past.
setInterval(() => tickRelative(Date.now()), TICK_MS);

// The skip link would change the hash (and so the page): move focus instead.
document.querySelector(".skip-link")?.addEventListener("click", (event) => {
  event.preventDefault();
  byId("main").focus();
});
