/** Instants as the API shows them: RFC 3339 UTC, milliseconds only when they are not zero. */
import { invalidArgument } from "../domain/errors.js";
import { LAST_INSTANT_MS } from "./timing.js";

/**
 * The last instants formatted, in a table of FORMATTED slots chosen by the instant's second: a
 * list of schedules shows the same instants again and again (the next fire of every schedule on
 * one cron, the same page refreshed), and a look-up here costs a fraction of formatting one.
 */
const FORMATTED = 1024;
const formattedMs = new Float64Array(FORMATTED).fill(Number.NaN);
const formattedText: string[] = new Array<string>(FORMATTED).fill("");

export function formatInstant(ms: number): string {
  const slot = (ms / 1000) & (FORMATTED - 1);
  if (formattedMs[slot] === ms) return formattedText[slot] as string;
  const iso = new Date(ms).toISOString();
  const text = iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
  formattedMs[slot] = ms;
  formattedText[slot] = text;
  return text;
}

/** `formatInstant` that passes null through (for optional API fields). */
export function formatInstantOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : formatInstant(ms);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** The first instant RFC 3339 writes in UTC (the last is LAST_INSTANT_MS, the end of 9999). */
const FIRST_INSTANT_MS = new Date(0).setUTCFullYear(0, 0, 1);

/**
 * The hint for a time whose offset's `+` arrived as a space, else "": a URL's query reads `+` as a
 * space, so `?from=2026-03-28T12:00:00+01:00` typed unencoded came as `… 01:00` (a tester).
 */
export function plusAsSpace(value: unknown): string {
  return typeof value === "string" && /\d \d{2}:\d{2}$/.test(value)
    ? '; a "+" in a URL\'s query arrives as a space: send it as %2B'
    : "";
}

/**
 * Parses an RFC 3339 time with an offset (`Z` or `±hh:mm`); `what` names the field in messages.
 * Digits past the millisecond round down, or up with `round: "up"` (a `start_at` of `…00.0001Z`
 * allows no occurrence at `…00Z`). The instant must be one the API can write back: from year 0000
 * to the end of 9999 in UTC (`9999-12-31T23:00:00-05:00` is year 10000).
 */
export function parseInstant(text: string, what = "time", round: "down" | "up" = "down"): number {
  const m = RFC3339.exec(text.trim());
  if (m === null) {
    throw invalidArgument(
      `${what} "${text}" is not an RFC 3339 time with an offset, such as "2026-11-15T18:51:00Z"${plusAsSpace(text)}`,
    );
  }
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  const month = Number(mo);
  const day = Number(d);
  // A leap second (RFC 3339 allows :60) has no instant of its own in Unix time, which Orbit counts in.
  if (Number(s) === 60 && Number(h) <= 23 && Number(mi) <= 59) {
    throw invalidArgument(
      `${what} "${text}" is a leap second, which Orbit's times (Unix time) do not have; give the second before or after it`,
    );
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
    throw invalidArgument(`${what} "${text}" is not a valid date and time`);
  }
  // RFC 3339's offset is hours 00-23 and minutes 00-59: `+25:00` is not an offset.
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) {
    throw invalidArgument(`${what} "${text}" has an invalid UTC offset ${sign}${oh}:${om} (from -23:59 to +23:59)`);
  }
  const date = new Date(0);
  date.setUTCFullYear(Number(y), month - 1, day);
  if (date.getUTCDate() !== day) throw invalidArgument(`${what} "${text}" is not a valid date and time`);
  const digits = frac === undefined ? "000" : frac.padEnd(3, "0");
  const ms = Number(digits.slice(0, 3)) + (round === "up" && /[1-9]/.test(digits.slice(3)) ? 1 : 0);
  date.setUTCHours(Number(h), Number(mi), Number(s), ms);
  const offset = z !== undefined ? 0 : (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  const instant = date.getTime() - offset;
  if (instant < FIRST_INSTANT_MS || instant > LAST_INSTANT_MS) {
    throw invalidArgument(
      `${what} "${text}" is ${instant < FIRST_INSTANT_MS ? "before year 0000" : "after year 9999"} in UTC; times run from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z`,
    );
  }
  return instant;
}
