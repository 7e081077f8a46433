// @ts-check
/**
 * What a list's link (`#/?state=paused&page=2&cursor=…`) holds that the list does not understand.
 * A value the list could not apply was ignored and kept in the URL: `#/?state=bogus` showed every
 * schedule under "any state", `#/?page=3` without its cursor "1–50 of 302" under a URL saying page
 * 3 (a tester). Such a value is now left out of the URL, and the status line says which and why,
 * as it says the other refusals; the list shows what the URL then says. A search longer than the
 * server's limit is cut to it, as the search field stops typing there, rather than sent and
 * refused (400) at every refresh.
 */
import { say } from "./actions.js";
import { iso } from "./dom.js";

/** The longest search the server takes (`q`, docs/api.md), in characters (code points, as it counts). */
export const SEARCH_MAX = 200;

/** The most of a value not understood that the status line quotes. */
const QUOTED = 40;

/**
 * For each key a list reads, why a value is not understood (a string), null when it is, or the
 * value the list takes instead with a note saying so.
 * @typedef {Record<string, (value: string) => string | null | {value: string, note: string}>} LinkRules
 */

/**
 * A rule for a key that takes one of `values`.
 * @param {string[]} values
 * @param {string} what what the key names, plural ("states")
 * @returns {(value: string) => string | null}
 */
export function oneOf(values, what) {
  return (value) => (values.includes(value) ? null : `the ${what} are ${values.join(", ")}`);
}

/**
 * The rule of the search: cut to the server's limit. A link's longer search filled the field whole
 * (`maxlength` stops typing, not a value set by script), was sent, and was refused (400
 * INVALID_ARGUMENT) at every refresh, the table empty.
 * @param {string} value
 */
export function searchRule(value) {
  const chars = [...value];
  if (chars.length <= SEARCH_MAX) return null;
  return {
    value: chars.slice(0, SEARCH_MAX).join(""),
    note: `cut the search to the server's ${SEARCH_MAX} characters (it held ${chars.length})`,
  };
}

/**
 * Why the link's page and cursor cannot be opened, or null when they can (or are not given). They
 * go together: a cursor says where the page starts, its number which page it is (2 or more).
 * @param {URLSearchParams} params
 */
function pageProblem(params) {
  const page = params.get("page");
  const cursor = params.get("cursor");
  if (page === null && cursor === null) return null;
  // An empty cursor is none: the server reads it so.
  if (!cursor) return "a page without its cursor: the first page is shown";
  if (page === null || !/^[1-9][0-9]*$/.test(page) || page === "1")
    return "a cursor without its page number (2 or more): the first page is shown";
  return null;
}

/**
 * Splits a link's query into what the list understands and what it does not: `rules` decide each
 * key's value, `page` and `cursor` go together (pageProblem), a key not in `rules` is not one of
 * the list's, and a key given twice counts once (the first, as URLSearchParams.get reads it).
 * @param {URLSearchParams} params
 * @param {LinkRules} rules the list's own keys, page and cursor aside
 * @returns {{kept: URLSearchParams, notes: string[]}} notes: what was left out or changed, and why
 */
export function readLink(params, rules) {
  const kept = new URLSearchParams();
  /** @type {string[]} */
  const notes = [];
  const paging = pageProblem(params);
  for (const [key, value] of params) {
    const rule = rules[key];
    let why;
    if (kept.has(key)) why = "given twice: the first counts";
    else if (key === "page" || key === "cursor") {
      // Said once for the two, below.
      if (paging === null) kept.set(key, value);
      continue;
    } else if (rule === undefined) why = `not one of this list's filters: ${Object.keys(rules).join(", ")}`;
    else why = rule(value);
    if (why === null) kept.set(key, value);
    else if (typeof why === "string") notes.push(`left out ${quoted(key, value)} (${why})`);
    else {
      kept.set(key, why.value);
      notes.push(why.note);
    }
  }
  if (paging !== null) {
    const given = ["page", "cursor"].filter((key) => params.has(key)).map((key) => quoted(key, params.get(key) ?? ""));
    notes.unshift(`left out ${given.join(" and ")} (${paging})`);
  }
  return { kept, notes };
}

/** `state=bogus`, a long value cut, as the status line quotes it. @param {string} key @param {string} value */
export function quoted(key, value) {
  const chars = [...value];
  return iso(`${key}=${chars.length > QUOTED ? `${chars.slice(0, QUOTED - 1).join("")}…` : value}`);
}

/**
 * Says in the status line what a link held that the list left out or changed (a warning: it stays
 * until dismissed or the next action, as a refusal does). Nothing when there is nothing to say.
 * @param {string[]} notes
 */
export function sayLinkNotes(notes) {
  if (notes.length > 0) say(`from the link: ${notes.join("; ")}`, "warn");
}
