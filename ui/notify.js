// @ts-check
/**
 * The notify field of the schedule form: empty (none), a webhook URL, or JSON (`{"url", "events"}`
 * or a list of those), checked in the page by the server's own rule (src/engine/outcome-settings.ts
 * `validateNotify`, src/domain/blocked-address.ts), with the server's words, so that a refused
 * webhook is said before anything is sent.
 */
import { repeatedKey } from "./json-text.js";

/** The events a target may ask for; all of them when it names none. */
export const NOTIFY_EVENTS = ["failure", "timeout", "dead_letter", "paused", "recovery"];
const MAX_TARGETS = 5;
const MAX_URL = 2000;
const METADATA = new Set(["fd00:ec2::254", "100.100.100.200"]);

/**
 * Whether a URL's host is one a webhook must never reach: link-local ranges (cloud metadata
 * services answer there) and the metadata addresses outside them (docs/security.md § Webhooks).
 * The browser's URL parser has already written an IP host in its canonical form (IPv4 dotted,
 * IPv6 compressed in brackets).
 * @param {string} hostname
 * @returns {boolean}
 */
export function isBlockedHost(hostname) {
  const a = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (/^\d+\.\d+\.\d+\.\d+$/.test(a)) return a.startsWith("169.254.") || METADATA.has(a);
  if (!hostname.startsWith("[")) return false;
  if (METADATA.has(a) || /^fe[89ab][0-9a-f]?:/.test(a)) return true;
  // An IPv4 address an IPv6 one carries (mapped, compatible, SIIT, NAT64, 6to4), as the server reads it.
  const w = hextets(a);
  if (w === null) return false;
  const quad = (/** @type {number} */ hi, /** @type {number} */ lo) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
  const prefix = w.slice(0, 6).join(",");
  const nat64 = w[0] === 0x64 && w[1] === 0xff9b && (w[2] === 1 || prefix === "100,65435,0,0,0,0");
  if (w[0] === 0x2002) return isBlockedHost(quad(w[1] ?? 0, w[2] ?? 0));
  if (nat64 || prefix === "0,0,0,0,0,0" || prefix === "0,0,0,0,0,65535" || prefix === "0,0,0,0,65535,0") {
    return isBlockedHost(quad(w[6] ?? 0, w[7] ?? 0));
  }
  return false;
}

/**
 * The eight 16-bit words of an IPv6 address as the URL parser writes it (compressed, hex words).
 * @param {string} a
 * @returns {number[] | null}
 */
function hextets(a) {
  const [head, tail] = a.includes("::") ? a.split("::") : [a, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const words = [...h, ...(tail === undefined ? [] : Array(8 - h.length - t.length).fill("0")), ...t];
  return words.length === 8 ? words.map((x) => Number.parseInt(x, 16)) : null;
}

/**
 * The targets of a notify value, or the server's refusal as `INVALID_ARGUMENT: …`.
 * @param {unknown} value
 * @returns {string | null} null when the server would take it
 */
export function notifyError(value) {
  if (value === undefined || value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  const refuse = (/** @type {string} */ why) => `INVALID_ARGUMENT: ${why}`;
  if (list.length > MAX_TARGETS) return refuse(`notify takes at most ${MAX_TARGETS} webhooks`);
  for (const [i, item] of list.entries()) {
    const where = Array.isArray(value) ? `notify[${i}]` : "notify";
    const target = typeof item === "string" ? { url: item } : item;
    if (typeof target !== "object" || target === null || Array.isArray(target)) {
      return refuse(`${where} must be a URL or {"url": …, "events": […]}`);
    }
    const unknown = Object.keys(target).find((k) => k !== "url" && k !== "events");
    if (unknown !== undefined) return refuse(`${where} has unknown key "${unknown}": use url and events`);
    /** @type {URL | null} */
    let parsed = null;
    try {
      parsed = typeof target.url === "string" && target.url.length <= MAX_URL ? new URL(target.url) : null;
    } catch {
      parsed = null;
    }
    if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      return refuse(`${where}.url must be an http or https URL of at most ${MAX_URL} characters`);
    }
    if (isBlockedHost(parsed.hostname)) {
      return refuse(
        `${where}.url points at ${parsed.hostname}, a link-local or cloud metadata address, which webhooks may not reach (docs/security.md § Webhooks)`,
      );
    }
    const events = target.events;
    if (
      events !== undefined &&
      events !== null &&
      (!Array.isArray(events) || events.some((e) => typeof e !== "string" || !NOTIFY_EVENTS.includes(e)))
    ) {
      return refuse(`${where}.events must be a list of: ${NOTIFY_EVENTS.join(", ")}`);
    }
  }
  return null;
}

/**
 * What the notify field holds: null (empty), a URL, or parsed JSON; throws on broken JSON.
 * @param {string} raw
 * @returns {unknown}
 */
export function parseNotify(raw) {
  const t = raw.trim();
  if (t === "") return null;
  return t.startsWith("{") || t.startsWith("[") ? JSON.parse(t) : t;
}

/**
 * The refusal of notify JSON that gives a key twice in one object, or null. JSON.parse keeps the
 * last one silently (`{"url": a, "url": b}` became b alone), as the input field refuses too.
 * Call it only with text {@link parseNotify} read.
 * @param {string} raw
 * @returns {string | null}
 */
export function notifyKeyError(raw) {
  const t = raw.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return null;
  const twice = repeatedKey(t);
  return twice === null
    ? null
    : `INVALID_ARGUMENT: notify gives the key ${JSON.stringify(twice)} twice in one object; give each key once`;
}
