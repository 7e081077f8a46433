/**
 * Time zones: IANA names resolved through Node's built-in ICU data, turned into a table of offset
 * periods so that the hot path never calls Intl.
 *
 * The table is built lazily, one UTC calendar year at a time: the offset is sampled once a day and
 * every change is pinned to the second by bisection. A year costs about 400 Intl calls (~1 ms) once
 * per process and zone; afterwards an offset lookup is a few integer comparisons.
 */
import { invalidSchedule } from "../domain/errors.js";
import { suggestKey } from "../domain/suggest.js";
import { DAY, SECOND, yearOfMs, yearStartMs } from "./civil.js";

/** A stretch of time with one UTC offset. Boundaries of the lazily built table also end periods. */
export interface Period {
  /** First instant of the period (inclusive). */
  start: number;
  /** First instant after the period (exclusive). */
  end: number;
  /** Offset in force (ms to add to an instant to get the wall time). */
  offset: number;
  /** Offset just before `start`. Larger than `offset`: the wall clock went back (a repeat). Smaller: a gap. */
  prevOffset: number;
  /** Offset from `end` on. */
  nextOffset: number;
  /**
   * Where the offset last changed (to `offset`, from `prevOffset`): `start`, or a little earlier
   * when the table's cut at a UTC new year falls inside the change's gap or repeat.
   */
  transition: number;
  /** Where the offset next changes (to `nextOffset`): `end`, or a little later across a cut. */
  nextTransition: number;
}

/** A Period to fill with {@link Zone.periodAt} (reused on hot paths to avoid allocation). */
export function emptyPeriod(): Period {
  return { start: 0, end: 0, offset: 0, prevOffset: 0, nextOffset: 0, transition: 0, nextTransition: 0 };
}

interface YearChunk {
  start: number;
  end: number;
  /** Instants inside (start, end) where the offset changes. */
  transitions: number[];
  /** offsets[0] is in force at `start`; offsets[i + 1] from transitions[i] on. */
  offsets: number[];
}

export const MIN_YEAR = 1;
export const MAX_YEAR = 9999;

export class Zone {
  private readonly chunks = new Map<number, YearChunk>();
  private readonly dtf: Intl.DateTimeFormat | null;

  private constructor(readonly name: string) {
    this.dtf =
      name === "UTC"
        ? null
        : new Intl.DateTimeFormat("en-US", {
            timeZone: name,
            hourCycle: "h23",
            year: "numeric",
            month: "numeric",
            day: "numeric",
            hour: "numeric",
            minute: "numeric",
            second: "numeric",
            era: "short",
          });
  }

  private static readonly cache = new Map<string, Zone>();

  /** The zone named `name`; throws INVALID_SCHEDULE for abbreviations and unknown names. */
  static of(name: string): Zone {
    let zone = Zone.cache.get(name);
    if (zone === undefined) {
      validateTimeZone(name);
      zone = new Zone(name);
      Zone.cache.set(name, zone);
    }
    return zone;
  }

  get isUtc(): boolean {
    return this.dtf === null;
  }

  /** UTC offset in ms at the instant `t`. */
  offsetAt(t: number): number {
    if (this.dtf === null) return 0;
    const chunk = this.chunk(yearOfMs(t));
    const { transitions, offsets } = chunk;
    let i = 0;
    while (i < transitions.length && (transitions[i] as number) <= t) i++;
    return offsets[i] as number;
  }

  /** Fills `out` with the period containing the instant `t` and returns it. */
  periodAt(t: number, out: Period): Period {
    if (this.dtf === null) {
      out.start = -8.64e15;
      out.end = 8.64e15;
      out.offset = out.prevOffset = out.nextOffset = 0;
      out.transition = out.start;
      out.nextTransition = out.end;
      return out;
    }
    const year = yearOfMs(t);
    const chunk = this.chunk(year);
    const { transitions, offsets } = chunk;
    let i = 0;
    while (i < transitions.length && (transitions[i] as number) <= t) i++;
    out.offset = offsets[i] as number;
    if (i > 0) {
      out.start = out.transition = transitions[i - 1] as number;
      out.prevOffset = offsets[i - 1] as number;
    } else {
      // The table is cut at each UTC new year. A change less than a day before the cut still
      // shapes this period (its gap or repeat can reach across the cut): report where it was.
      out.start = out.transition = chunk.start;
      const prev = this.chunk(year - 1);
      out.prevOffset = prev.offsets[prev.offsets.length - 1] as number;
      const last = prev.transitions[prev.transitions.length - 1];
      if (last !== undefined && out.prevOffset === out.offset && chunk.start - last < DAY) {
        out.transition = last;
        out.prevOffset = prev.offsets[prev.offsets.length - 2] as number;
      }
    }
    if (i < transitions.length) {
      out.end = out.nextTransition = transitions[i] as number;
      out.nextOffset = offsets[i + 1] as number;
    } else {
      out.end = out.nextTransition = chunk.end;
      const next = this.chunk(year + 1);
      out.nextOffset = next.offsets[0] as number;
      const first = next.transitions[0];
      if (first !== undefined && out.nextOffset === out.offset && first - chunk.end < DAY) {
        out.nextTransition = first;
        out.nextOffset = next.offsets[1] as number;
      }
    }
    return out;
  }

  /** The transitions (instant, offset before, offset after) between two instants, for tests and docs. */
  transitionsBetween(from: number, to: number): Array<{ at: number; before: number; after: number }> {
    const out: Array<{ at: number; before: number; after: number }> = [];
    if (this.dtf === null) return out;
    for (let y = yearOfMs(from); y <= yearOfMs(to); y++) {
      const c = this.chunk(y);
      c.transitions.forEach((at, i) => {
        if (at >= from && at < to) out.push({ at, before: c.offsets[i] as number, after: c.offsets[i + 1] as number });
      });
      if (c.end >= from && c.end < to && this.firstOffsetOf(y + 1) !== c.offsets[c.offsets.length - 1]) {
        out.push({ at: c.end, before: c.offsets[c.offsets.length - 1] as number, after: this.firstOffsetOf(y + 1) });
      }
    }
    return out;
  }

  private firstOffsetOf(year: number): number {
    return this.chunk(year).offsets[0] as number;
  }

  private chunk(year: number): YearChunk {
    const y = Math.min(MAX_YEAR + 1, Math.max(MIN_YEAR - 1, year));
    let chunk = this.chunks.get(y);
    if (chunk === undefined) {
      chunk = this.buildChunk(y);
      this.chunks.set(y, chunk);
    }
    return chunk;
  }

  private buildChunk(year: number): YearChunk {
    const start = yearStartMs(year);
    const end = yearStartMs(year + 1);
    const transitions: number[] = [];
    const offsets: number[] = [];
    let prevT = start;
    let prevOff = this.intlOffset(start);
    offsets.push(prevOff);
    for (let t = start + DAY; ; t += DAY) {
      const at = Math.min(t, end - SECOND);
      const off = this.intlOffset(at);
      if (off !== prevOff) {
        // Bisect to the first second with the new offset (one change per day at most).
        let lo = prevT;
        let hi = at;
        while (hi - lo > SECOND) {
          const mid = lo + Math.floor((hi - lo) / (2 * SECOND)) * SECOND;
          if (this.intlOffset(mid) === prevOff) lo = mid;
          else hi = mid;
        }
        transitions.push(hi);
        offsets.push(off);
        prevOff = off;
      }
      prevT = at;
      if (at >= end - SECOND) break;
    }
    return { start, end, transitions, offsets };
  }

  /** The offset at `t` straight from ICU (slow: only used to build the table). */
  intlOffset(t: number): number {
    const dtf = this.dtf;
    if (dtf === null) return 0;
    const whole = t - (((t % SECOND) + SECOND) % SECOND);
    let year = 0;
    let month = 0;
    let day = 0;
    let hour = 0;
    let minute = 0;
    let second = 0;
    let bc = false;
    for (const part of dtf.formatToParts(whole)) {
      switch (part.type) {
        case "year":
          year = Number(part.value);
          break;
        case "month":
          month = Number(part.value);
          break;
        case "day":
          day = Number(part.value);
          break;
        case "hour":
          hour = Number(part.value);
          break;
        case "minute":
          minute = Number(part.value);
          break;
        case "second":
          second = Number(part.value);
          break;
        case "era":
          bc = part.value.startsWith("B");
          break;
      }
    }
    const d = new Date(0);
    d.setUTCFullYear(bc ? 1 - year : year, month - 1, day);
    d.setUTCHours(hour, minute, second, 0);
    return d.getTime() - whole;
  }
}

/** Suggestions for the abbreviations people type most; a suggestion, never an alias. */
const ABBREVIATION_HINTS: Record<string, string> = {
  EST: "America/New_York",
  EDT: "America/New_York",
  EST5EDT: "America/New_York",
  CST: "America/Chicago",
  CDT: "America/Chicago",
  CST6CDT: "America/Chicago",
  MST: "America/Denver",
  MDT: "America/Denver",
  MST7MDT: "America/Denver",
  PST: "America/Los_Angeles",
  PDT: "America/Los_Angeles",
  PST8PDT: "America/Los_Angeles",
  IST: "Asia/Kolkata",
  CET: "Europe/Berlin",
  CEST: "Europe/Berlin",
  MET: "Europe/Berlin",
  EET: "Europe/Athens",
  WET: "Europe/Lisbon",
  BST: "Europe/London",
  GMT: "UTC",
  UTC: "UTC",
  JST: "Asia/Tokyo",
  AEST: "Australia/Sydney",
  AEDT: "Australia/Sydney",
  HST: "Pacific/Honolulu",
};

/** Upper-cased names of UTC that are not its one spelling, "UTC" (IANA links and the usual ones). */
const UTC_NAMES: ReadonlySet<string> = new Set([
  "UTC",
  "UCT",
  "ZULU",
  "Z",
  "UNIVERSAL",
  "GMT",
  "GMT0",
  "GMT+0",
  "GMT-0",
  "GREENWICH",
]);

let knownZones: Map<string, string> | undefined;

/** Canonical-case spelling of every zone ICU lists, keyed by lower case, for "did you mean". */
function knownZoneSpellings(): Map<string, string> {
  if (knownZones === undefined) {
    knownZones = new Map();
    for (const z of Intl.supportedValuesOf("timeZone")) knownZones.set(z.toLowerCase(), z);
    for (const z of ["UTC", "Asia/Kolkata", "Europe/Kyiv", "America/Nuuk", "Pacific/Kanton", "Asia/Yangon"]) {
      knownZones.set(z.toLowerCase(), z);
    }
  }
  return knownZones;
}

/** The `Area/Location` zone an old link name without an area stands for (`Japan`: `Asia/Tokyo`), or null. */
function linkTarget(name: string): string | null {
  try {
    const target = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    return target.includes("/") && !target.startsWith("Etc/") ? target : null;
  } catch {
    return null;
  }
}

/**
 * Accepts IANA names (`Area/Location`, `Etc/…` and `UTC`) that ICU knows. Refuses abbreviations and
 * POSIX-style names (`EST`, `IST`, `CET`, `PST8PDT` …): ICU would silently map them to one of the
 * places they might mean.
 */
export function validateTimeZone(name: string): void {
  if (name === "UTC") return;
  const upper = name.toUpperCase();
  // Other names of UTC (`utc`, `Zulu`, `UCT`, `Z`, …) are not ambiguous: say that it is "UTC" they
  // mean (they were refused as ambiguous abbreviations, with "Europe/Berlin" for an example).
  if (UTC_NAMES.has(upper)) {
    throw invalidSchedule(`timezone "${name}" is UTC under another name; write "UTC"`);
  }
  if (name.trim() === "") {
    throw invalidSchedule(`timezone is empty; give an IANA name such as "Europe/Berlin", or leave it out for UTC`);
  }
  // A fixed offset (`+05:00`, `-0330`, `UTC+1`, `GMT+2`): Etc/GMT±h names whole hours, with POSIX's
  // reversed sign. `GMT+2` was told it is an ambiguous abbreviation, with "Europe/Berlin" (+1 in
  // winter) for an example (a tester).
  const offset = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(name);
  if (offset !== null) {
    const hours = Number(offset[2]);
    const sign = offset[1] as string;
    const minutes = offset[3] ?? "00";
    if (hours === 0 && minutes === "00") throw invalidSchedule(`timezone "${name}" is UTC; write "UTC"`);
    // The Etc zones run from Etc/GMT-14 (UTC+14) to Etc/GMT+12 (UTC-12): GMT-14 was pointed to an
    // Etc/GMT+14 that does not exist.
    const whole = minutes === "00" && hours > 0 && hours <= (sign === "+" ? 14 : 12);
    const meaning = /^[+-]/.test(name) ? "" : ` for UTC${sign}${hours}`;
    const etc = whole ? `"Etc/GMT${sign === "+" ? "-" : "+"}${hours}"${meaning} (POSIX's reversed sign) or ` : "";
    throw invalidSchedule(
      `timezone "${name}" is a fixed offset, not a time zone; give ${etc}the IANA name of the place (Area/Location, such as "Asia/Kolkata")`,
    );
  }
  if (!name.includes("/")) {
    const hint = ABBREVIATION_HINTS[upper];
    // A country's old name for its zone (`Japan`, `NZ`, `GB`, `Cuba`): one place, the one to write.
    const place = hint === undefined ? linkTarget(name) : null;
    if (place !== null) throw invalidSchedule(`timezone "${name}" is an old alias of "${place}"; write "${place}"`);
    throw invalidSchedule(
      `timezone "${name}" is not an IANA time zone name (abbreviations are ambiguous and refused); ` +
        `use a name such as "${hint ?? "Europe/Berlin"}"${hint === undefined || hint === "UTC" ? "" : ` or "UTC"`}`,
    );
  }
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    // A misspelt place (`Europe/Berln`): the known name one or two letters away, if there is one.
    // Only for names of a plausible length: the distance is computed against every zone name.
    const near = name.length <= 64 ? suggestKey(name, [...new Set(knownZoneSpellings().values())]) : null;
    throw invalidSchedule(
      `timezone "${name}" is not a known IANA time zone name${near === null ? "" : `; did you mean "${near}"?`}`,
    );
  }
  const spelled = knownZoneSpellings().get(name.toLowerCase());
  if (
    (spelled !== undefined && spelled !== name) ||
    (resolved.toLowerCase() === name.toLowerCase() && resolved !== name)
  ) {
    throw invalidSchedule(
      `timezone "${name}" is not a known IANA time zone name; did you mean "${spelled ?? resolved}"?`,
    );
  }
}
