// @ts-check
/**
 * The notify field of the schedule form: empty (none), a webhook URL, or JSON (`{"url", "events"}`
 * or a list of those), checked in the page by the server's own rule (src/engine/outcome-settings.ts
 * `validateNotify`, src/domain/blocked-address.ts), with the server's words, so that a refused
 * webhook is said before anything is sent.
 */

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
  // An IPv4 address written as IPv6: the parser gives ::ffff:a9fe:a9fe for ::ffff:169.254.169.254.
  const mapped = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(a);
  if (mapped === null) return false;
  const v4 =
    mapped[1] ??
    [Number.parseInt(mapped[2] ?? "0", 16), Number.parseInt(mapped[3] ?? "0", 16)]
      .flatMap((word) => [word >> 8, word & 255])
      .join(".");
  return isBlockedHost(v4);
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
