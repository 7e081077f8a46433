// @ts-check
/**
 * The page's status line: what the last action did, and whether the last refresh failed. Its
 * messages lie over the page under the top bar (docs/ui.md § Fit and finish).
 */
import { ApiError } from "./api.js";
import { byId, h, instantNodes } from "./dom.js";

/**
 * Shows a message in the page's status line (role=status, read by screen readers). A success
 * ("ok") goes by itself after a few seconds (style.css `--message-life`); a warning or an error
 * stays until dismissed (its × button) or replaced by the next action's message. Lying over the
 * page, a message that stayed for good hid the title on a phone and caught the clicks meant for
 * another row's buttons.
 * @param {string} text
 * @param {"ok" | "warn" | "error"} [tone]
 * @param {{about: string, state: string}} [of] the thing the message tells the state of, for `retract`
 */
export function say(text, tone = "ok", of = undefined) {
  byId("status").replaceChildren(message(text, tone, of));
}

/** Empties the status line: a new action is under way, and the last one's result no longer holds. */
export function unsay() {
  byId("status").replaceChildren();
}

/**
 * Removes a message about `about` that told another state than `state`: "cancel requested …:
 * RUNNING" stayed on an execution's page after it was CANCELLED.
 * @param {string} about
 * @param {string} state
 */
export function retract(about, state) {
  const said = /** @type {NodeListOf<HTMLElement>} */ (
    byId("status").querySelectorAll(`p[data-about="${CSS.escape(about)}"]`)
  );
  for (const p of said) if (p.dataset.state !== state) p.remove();
}

/**
 * Says that a refresh failed, beside what the status line already says: an action refused while
 * the server was down was replaced by the refresh after it failing, so nothing said the action did
 * not happen. The line is marked so that the next refresh that succeeds takes it away (app.js), and
 * only it.
 * @param {unknown} err
 */
export function sayRefreshFailed(err) {
  const status = byId("status");
  for (const p of status.querySelectorAll("p[data-refresh]")) p.remove();
  status.append(message(`could not refresh: ${errorText(err)}`, "error", { refresh: "failed" }));
}

/**
 * A status message: its text, whole in its title for the pointer; focusable, so that the keyboard
 * can reach it and show it whole (style.css) where the line cuts it with "…"; and a button that
 * dismisses it. Screen readers read the whole text: the status line is a polite live region. An
 * "ok" message runs the CSS animation `message-life` (paused while focused) and goes when it ends;
 * tests end it at once with `Animation.finish()`.
 * @param {string} text
 * @param {"ok" | "warn" | "error"} tone
 * @param {Record<string, string>} [dataset]
 */
function message(text, tone, dataset = undefined) {
  const p = h("p", { title: text, tabindex: 0, class: `message ${tone}`, dataset });
  // The × is drawn by CSS, so that the message's text is still only what it says.
  const dismiss = h("button", {
    type: "button",
    class: "dismiss",
    "aria-label": "Dismiss message",
    title: "Dismiss",
    onclick: () => p.remove(),
  });
  // An instant in it stays whole where a phone wraps the message ("started execution x:2026-12-" / "07T…").
  p.append(h("span", { class: "message-text" }, instantNodes(text)), dismiss);
  p.addEventListener("animationend", (e) => {
    if (e.target === p && e.animationName === "message-life") p.remove();
  });
  return p;
}

/**
 * A view's own reload (a filter changed, another page): a refusal is said in the status line, as
 * the auto-refresh says it, instead of escaping as an unhandled rejection (a console error).
 * @param {() => Promise<void>} refresh
 */
export async function reload(refresh) {
  try {
    await refresh();
  } catch (err) {
    sayRefreshFailed(err);
  }
}

/**
 * An error as the page shows it: a 403 as "Not allowed: <the server's reason>".
 * @param {unknown} err
 */
export function errorText(err) {
  if (err instanceof ApiError && err.status === 403) return `Not allowed (403 ${err.code}): ${err.message}`;
  return String(err);
}

/**
 * Said under a page's 404 for its own schedule or execution: the page stops its auto-refresh
 * (app.js) until it is reloaded or opened again.
 */
export const NOT_REFRESHED = "This page no longer refreshes by itself: reload it to look again.";

/**
 * What the status line says, kept to be said again on the next page (`sayCarried`): a delete made
 * on a schedule's own page returned to the list with an empty status line.
 * @type {Node[]}
 */
let carried = [];

/** Keeps what the status line says for the page the UI is about to open. */
export function carryStatus() {
  carried = [...byId("status").childNodes];
}

/** Says on this page what the last one carried over, once. */
export function sayCarried() {
  byId("status").replaceChildren(...carried);
  carried = [];
}
