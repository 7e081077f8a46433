/**
 * Property tests: the time engine against an independent brute-force reference written here.
 *
 * The reference knows nothing of CronMatcher or Zone. Expressions are generated together with their
 * meaning (a set or a predicate per field), so the reference does not parse either. It decides each
 * day with Date UTC arithmetic, reads offsets straight from Intl.DateTimeFormat#formatToParts (memoized
 * per hour, minute or second block only when both ends of the block agree), and scans every minute
 * (5 fields) or second (6 fields) of a window, applying docs/design.md § Time zones and DST literally:
 *
 * - an instant t is a regular occurrence when its wall reading matches and, if that reading also
 *   belongs to another instant t' (a repeat), the policy admits it (`first`: t < t', `last`: t > t');
 * - under `gap: shift`, t is also an occurrence when it lies within `delta` after a spring-forward
 *   (offset `ob` → `ob + delta`) and the non-existent wall reading t + ob matches.
 *
 * The engine must produce exactly that set, in increasing order, from nextAfter, and its size from
 * countBetween. The seed is fixed; fast-check prints it with the shrunk counterexample on failure.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileTiming } from "../../src/time/schedule-timing.js";
import { kthLast } from "../../src/time/timing.js";
import { intlWallFields } from "../helpers/intl-wall.js";

const SEED = 20_260_329;
const SEC = 1000;
const MIN = 60 * SEC;
const HR = 60 * MIN;
const DAY_MS = 24 * HR;

const ZONES = [
  "Europe/Berlin",
  "America/New_York",
  "Australia/Lord_Howe",
  "Australia/Sydney",
  "Asia/Kolkata",
  "America/Sao_Paulo",
  "Europe/London",
  "UTC",
  "Pacific/Chatham",
  "America/St_Johns",
] as const;

/** The six gap × repeat combinations, two of them under their short names. */
const POLICIES = ["once", "wall_clock", "shift:last", "shift:both", "skip:first", "skip:last"] as const;
const RULES: Record<string, { gap: "shift" | "skip"; repeat: "first" | "last" | "both" }> = {
  once: { gap: "shift", repeat: "first" },
  wall_clock: { gap: "skip", repeat: "both" },
  "shift:last": { gap: "shift", repeat: "last" },
  "shift:both": { gap: "shift", repeat: "both" },
  "skip:first": { gap: "skip", repeat: "first" },
  "skip:last": { gap: "skip", repeat: "last" },
};

// ---------------------------------------------------------------------------------------------
// Reference zone: offsets from Intl.
// ---------------------------------------------------------------------------------------------

/** Offset (ms) at instant t, straight from ICU. */
function intlOffset(zone: string, t: number): number {
  const f = intlWallFields(zone, t);
  const wall = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second);
  return wall - (t - (((t % SEC) + SEC) % SEC));
}

/** Memo of offsets per zone and block size: the offset when both ends of the block agree, else NaN. */
const blockMemo = new Map<string, Map<number, Map<number, number>>>();

function blockOffset(zone: string, size: number, t: number): number {
  let sizes = blockMemo.get(zone);
  if (sizes === undefined) {
    sizes = new Map();
    blockMemo.set(zone, sizes);
  }
  let memo = sizes.get(size);
  if (memo === undefined) {
    memo = new Map();
    sizes.set(size, memo);
  }
  const b = Math.floor(t / size);
  let v = memo.get(b);
  if (v === undefined) {
    const first = intlOffset(zone, b * size);
    v = first === intlOffset(zone, b * size + size - SEC) ? first : Number.NaN;
    memo.set(b, v);
  }
  return v;
}

/** Offset at instant t (whole seconds), exact to the second. */
function refOffset(zone: string, t: number): number {
  const h = blockOffset(zone, HR, t);
  if (!Number.isNaN(h)) return h;
  const m = blockOffset(zone, MIN, t);
  if (!Number.isNaN(m)) return m;
  return intlOffset(zone, t);
}

interface Change {
  at: number;
  before: number;
  after: number;
}

/** Offset changes in [a, b), found by sampling every `step` and bisecting to the second. */
function refChanges(zone: string, a: number, b: number, step: number): Change[] {
  // Whole seconds only, so that the bisection lands on the change itself.
  a = Math.floor(a / SEC) * SEC;
  b = Math.ceil(b / SEC) * SEC;
  const out: Change[] = [];
  let prev = refOffset(zone, a);
  for (let t = a + step; t < b + step; t += step) {
    const x = Math.min(t, b);
    const off = refOffset(zone, x);
    if (off !== prev) {
      let lo = x - step;
      let hi = x;
      while (hi - lo > SEC) {
        const mid = lo + Math.floor((hi - lo) / 2 / SEC) * SEC;
        if (refOffset(zone, mid) === prev) lo = mid;
        else hi = mid;
      }
      if (hi >= a && hi < b) out.push({ at: hi, before: prev, after: off });
      prev = off;
    }
  }
  return out;
}

/** The 2025-2027 transitions of every test zone: start instants cluster around them. */
const TRANSITIONS: Record<string, number[]> = Object.fromEntries(
  ZONES.map((z) => [z, refChanges(z, Date.UTC(2025, 0, 1), Date.UTC(2028, 0, 1), DAY_MS / 2).map((c) => c.at)]),
);

// ---------------------------------------------------------------------------------------------
// Reference cron: each generated field carries its text and its meaning.
// ---------------------------------------------------------------------------------------------

interface SetField {
  text: string;
  values: ReadonlySet<number>;
}

type DayTest = (d: number, weekday: number, len: number) => boolean;

interface DayField {
  text: string;
  test: DayTest;
}

interface RefCron {
  seconds: SetField | null;
  minute: SetField;
  hour: SetField;
  dom: DayField;
  month: SetField;
  dow: DayField;
}

const cronText = (c: RefCron): string =>
  [c.seconds?.text, c.minute.text, c.hour.text, c.dom.text, c.month.text, c.dow.text]
    .filter((x) => x !== undefined)
    .join(" ");

const isWeekday = (wd: number): boolean => wd >= 1 && wd <= 5;

/** The weekday (Mon-Fri) nearest day n within the month, by looking outwards one day at a time. */
function nearestWeekday(n: number, firstWeekday: number, len: number): number {
  for (let dist = 0; dist < 7; dist++) {
    for (const d of [n - dist, n + dist]) {
      if (d >= 1 && d <= len && isWeekday((firstWeekday + d - 1) % 7)) return d;
    }
  }
  throw new Error("unreachable");
}

/** Memo of day matches per case: days since the epoch → match. */
function makeDayMatcher(c: RefCron): (days: number) => boolean {
  const memo = new Map<number, boolean>();
  const vixieAnd = c.dom.text.startsWith("*") || c.dom.text === "?" || c.dow.text.startsWith("*") || c.dow.text === "?";
  return (days) => {
    let v = memo.get(days);
    if (v === undefined) {
      const date = new Date(days * DAY_MS);
      const y = date.getUTCFullYear();
      const m = date.getUTCMonth();
      const d = date.getUTCDate();
      const wd = date.getUTCDay();
      const len = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
      if (!c.month.values.has(m + 1)) v = false;
      else {
        const a = c.dom.test(d, wd, len);
        const b = c.dow.test(d, wd, len);
        v = vixieAnd ? a && b : a || b;
      }
      memo.set(days, v);
    }
    return v;
  };
}

/** True when the wall reading `w` (whole seconds, read as UTC) matches. */
function makeWallMatcher(c: RefCron): (w: number) => boolean {
  const dayMatches = makeDayMatcher(c);
  const seconds = c.seconds?.values ?? new Set([0]);
  return (w) => {
    const sod = (((w % DAY_MS) + DAY_MS) % DAY_MS) / SEC;
    return (
      seconds.has(sod % 60) &&
      c.minute.values.has(Math.floor(sod / 60) % 60) &&
      c.hour.values.has(Math.floor(sod / 3600)) &&
      dayMatches(Math.floor(w / DAY_MS))
    );
  };
}

/** The reference occurrences in (from, to], scanning every `step` ms. */
function referenceOccurrences(c: RefCron, zone: string, policy: string, from: number, to: number): number[] {
  const { gap, repeat } = RULES[policy] as (typeof RULES)[string];
  const step = c.seconds === null ? MIN : SEC;
  const matches = makeWallMatcher(c);
  const springs = refChanges(zone, from - 3 * HR, to + SEC, 20 * MIN).filter((ch) => ch.after > ch.before);
  const out: number[] = [];
  for (let t = Math.floor(from / step) * step + step; t <= to; t += step) {
    const off = refOffset(zone, t);
    const wall = t + off;
    let regular = matches(wall);
    if (regular && repeat !== "both") {
      for (const other of new Set([refOffset(zone, t - 3 * HR), refOffset(zone, t + 3 * HR)])) {
        if (other === off) continue;
        const twin = wall - other;
        if (refOffset(zone, twin) !== other) continue;
        // The same wall reading happens at `twin` too.
        if ((repeat === "first" && twin < t) || (repeat === "last" && twin > t)) regular = false;
      }
    }
    let shifted = false;
    if (!regular && gap === "shift") {
      for (const s of springs) {
        if (t >= s.at && t < s.at + (s.after - s.before) && matches(t + s.before)) shifted = true;
      }
    }
    if (regular || shifted) out.push(t);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Generators.
// ---------------------------------------------------------------------------------------------

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

interface Element {
  text: string;
  values: number[];
}

const span = (lo: number, hi: number, step = 1): number[] => {
  const out: number[] = [];
  for (let v = lo; v <= hi; v += step) out.push(v);
  return out;
};

const randomCase = (s: string, upper: boolean): string => (upper ? s : s.toLowerCase());

/**
 * One list element of a field with values lo..hi: `*`, a value, a range, `*\/n`, `a-b/n` or `a/n`.
 * `name` renders a value as a name (month or weekday) when it has one.
 */
function elementArb(
  lo: number,
  hi: number,
  opts: {
    maxStep?: number;
    weights?: number[];
    name?: (v: number) => string | null;
    value?: fc.Arbitrary<number>;
  } = {},
): fc.Arbitrary<Element> {
  const value = opts.value ?? fc.integer({ min: lo, max: hi });
  const maxStep = opts.maxStep ?? hi - lo + 1;
  const w = opts.weights ?? [1, 4, 3, 2, 2, 2];
  const show = (v: number, useName: boolean): string => (useName ? (opts.name?.(v) ?? String(v)) : String(v));
  return fc.oneof(
    { weight: w[0] as number, arbitrary: fc.constant({ text: "*", values: span(lo, hi) }) },
    {
      weight: w[1] as number,
      arbitrary: fc.tuple(value, fc.boolean()).map(([v, n]) => ({ text: show(v, n), values: [v] })),
    },
    {
      weight: w[2] as number,
      arbitrary: fc.tuple(value, value, fc.boolean()).map(([a, b, n]) => ({
        text: `${show(Math.min(a, b), n)}-${show(Math.max(a, b), n)}`,
        values: span(Math.min(a, b), Math.max(a, b)),
      })),
    },
    {
      weight: w[3] as number,
      arbitrary: fc.integer({ min: 1, max: maxStep }).map((n) => ({ text: `*/${n}`, values: span(lo, hi, n) })),
    },
    {
      weight: w[4] as number,
      arbitrary: fc.tuple(value, value, fc.integer({ min: 1, max: maxStep })).map(([a, b, n]) => ({
        text: `${Math.min(a, b)}-${Math.max(a, b)}/${n}`,
        values: span(Math.min(a, b), Math.max(a, b), n),
      })),
    },
    {
      weight: w[5] as number,
      arbitrary: fc.tuple(value, fc.integer({ min: 1, max: maxStep })).map(([a, n]) => ({
        text: `${a}/${n}`,
        values: span(a, hi, n),
      })),
    },
  );
}

/** A comma-separated list of 1-3 elements. */
function listArb(element: fc.Arbitrary<Element>, fold = (v: number) => v): fc.Arbitrary<SetField> {
  return fc.array(element, { minLength: 1, maxLength: 3 }).map((els) => ({
    text: els.map((e) => e.text).join(","),
    values: new Set(els.flatMap((e) => e.values).map(fold)),
  }));
}

/** Seconds and minutes: dense on purpose (`*`, small steps), so DST hours have many occurrences. */
const sixtyArb = (denseWeight: number): fc.Arbitrary<SetField> =>
  fc.oneof(
    { weight: denseWeight, arbitrary: fc.constant({ text: "*", values: new Set(span(0, 59)) }) },
    {
      weight: denseWeight,
      arbitrary: fc.integer({ min: 2, max: 30 }).map((n) => ({ text: `*/${n}`, values: new Set(span(0, 59, n)) })),
    },
    { weight: 4, arbitrary: listArb(elementArb(0, 59, { weights: [0, 4, 2, 1, 2, 2], maxStep: 30 })) },
  );

/** Hours: biased to 0-3 so the DST nights (and Sao Paulo's midnight gap) matter. */
const hourArb: fc.Arbitrary<SetField> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ text: "*", values: new Set(span(0, 23)) }) },
  {
    weight: 6,
    arbitrary: listArb(
      elementArb(0, 23, {
        weights: [0, 5, 3, 1, 1, 1],
        maxStep: 12,
        value: fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) },
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 23 }) },
        ),
      }),
    ),
  },
);

/** Month: mostly `*`; restricted months make the day fields use only days every month has. */
const monthArb: fc.Arbitrary<SetField> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ text: "*", values: new Set(span(1, 12)) }) },
  {
    weight: 2,
    arbitrary: fc
      .boolean()
      .chain((upper) =>
        listArb(
          elementArb(1, 12, { weights: [0, 3, 3, 1, 1, 1], name: (v) => randomCase(MONTHS[v - 1] as string, upper) }),
        ),
      ),
  },
);

const dayOfMonthArb = (safe: boolean, starStepMax: number): fc.Arbitrary<DayField> => {
  const maxDay = safe ? 28 : 31;
  const plain = (s: SetField): DayField => ({ text: s.text, test: (d) => s.values.has(d) });
  const quartz: fc.Arbitrary<DayField> = fc.oneof(
    fc.constantFrom("L", "l").map((text): DayField => ({ text, test: (d, _w, len) => d === len })),
    fc
      .integer({ min: 1, max: safe ? 27 : 30 })
      .map((n): DayField => ({ text: `L-${n}`, test: (d, _w, len) => d === len - n })),
    fc.tuple(fc.integer({ min: 1, max: maxDay }), fc.constantFrom("W", "w")).map(([n, w]) => ({
      text: `${n}${w}`,
      test: (d: number, wd: number, len: number) => {
        if (n > len) return false;
        const first = (((wd - (d - 1)) % 7) + 7) % 7;
        return d === nearestWeekday(n, first, len);
      },
    })),
    fc.constantFrom("LW", "lw").map((text) => ({
      text,
      test: (d: number, wd: number, len: number) => {
        const first = (((wd - (d - 1)) % 7) + 7) % 7;
        let last = len;
        while (!isWeekday((first + last - 1) % 7)) last--;
        return d === last;
      },
    })),
  );
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant({ text: "*", test: () => true }) },
    { weight: 1, arbitrary: fc.constant({ text: "?", test: () => true }) },
    {
      weight: 2,
      arbitrary: fc
        .integer({ min: 2, max: starStepMax })
        .map((n) => ({ text: `*/${n}`, test: (d: number) => (d - 1) % n === 0 })),
    },
    {
      weight: 3,
      // Values stay below maxDay, but `a/n` runs to the field's end (31) as the grammar says.
      arbitrary: listArb(
        elementArb(1, 31, { weights: [0, 3, 2, 0, 1, 1], maxStep: 10, value: fc.integer({ min: 1, max: maxDay }) }),
      ).map(plain),
    },
    { weight: 3, arbitrary: quartz },
  );
};

const dayOfWeekArb = (starStepMax: number): fc.Arbitrary<DayField> => {
  const plain = (s: SetField): DayField => ({ text: s.text, test: (_d, wd) => s.values.has(wd) });
  const dayName = (upper: boolean) => (v: number) => (v < 7 ? randomCase(DAYS[v] as string, upper) : null);
  const day = fc.tuple(fc.integer({ min: 0, max: 7 }), fc.boolean(), fc.boolean());
  const showDay = (v: number, useName: boolean, upper: boolean) =>
    useName ? (dayName(upper)(v) ?? String(v)) : String(v);
  const quartz: fc.Arbitrary<DayField> = fc.oneof(
    fc.tuple(day, fc.constantFrom("L", "l")).map(([[v, n, u], l]) => ({
      text: `${showDay(v, n, u)}${l}`,
      test: (d: number, wd: number, len: number) => wd === v % 7 && d + 7 > len,
    })),
    fc.tuple(day, fc.integer({ min: 1, max: 5 })).map(([[v, n, u], k]) => ({
      text: `${showDay(v, n, u)}#${k}`,
      test: (d: number, wd: number) => wd === v % 7 && Math.floor((d - 1) / 7) + 1 === k,
    })),
  );
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant({ text: "*", test: () => true }) },
    { weight: 1, arbitrary: fc.constant({ text: "?", test: () => true }) },
    {
      weight: 2,
      arbitrary: fc.integer({ min: 2, max: starStepMax }).map((n) => ({
        text: `*/${n}`,
        test: (_d: number, wd: number) => span(0, 7, n).some((v) => v % 7 === wd),
      })),
    },
    {
      weight: 3,
      arbitrary: fc
        .boolean()
        .chain((upper) =>
          listArb(elementArb(0, 7, { weights: [0, 3, 2, 0, 1, 1], maxStep: 3, name: dayName(upper) }), (v) => v % 7),
        )
        .map(plain),
    },
    { weight: 2, arbitrary: quartz },
  );
};

/**
 * Day fields that always fire again within a few years, so that the engine's search for the next
 * occurrence after the window stays short: restricted months use only days every month has, and a
 * `*`-prefixed step in one day field (the Vixie AND) keeps steps that meet every weekday and week.
 */
const daysArb: fc.Arbitrary<{ dom: DayField; month: SetField; dow: DayField }> = monthArb.chain((month) =>
  fc.record({
    dom: dayOfMonthArb(month.text !== "*", 7),
    month: fc.constant(month),
    dow: dayOfWeekArb(5),
  }),
);

/** Every day: most zone cases, so that windows of a day or two contain occurrences. */
const everyDay = fc.constant({
  dom: { text: "*", test: () => true } as DayField,
  month: { text: "*", values: new Set(span(1, 12)) } as SetField,
  dow: { text: "*", test: () => true } as DayField,
});

const cronArb = (withSeconds: boolean): fc.Arbitrary<RefCron> =>
  fc
    .record({
      seconds: withSeconds ? sixtyArb(3) : fc.constant(null),
      minute: withSeconds ? sixtyArb(2) : sixtyArb(4),
      hour: hourArb,
      days: fc.oneof({ weight: 3, arbitrary: everyDay }, { weight: 2, arbitrary: daysArb }),
    })
    .map(({ days, ...rest }) => ({ ...rest, ...days }));

/**
 * A window (from, from + window]: mostly starting up to `around` before a 2025-2027 transition of the
 * zone and long enough to cross it; otherwise anywhere in those years. Instants are often not whole
 * seconds, and sometimes exactly whole minutes (so that `from` itself may be an occurrence).
 */
const windowArb = (zone: string, around: number, maxWindow: number): fc.Arbitrary<{ from: number; window: number }> => {
  const transitions = TRANSITIONS[zone] as number[];
  const anywhere = fc.record({
    from: fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2027, 11, 31) }),
    window: fc.integer({ min: 1, max: maxWindow }),
  });
  if (transitions.length === 0) return anywhere;
  const near = fc
    .record({
      t: fc.constantFrom(...transitions),
      before: fc.integer({ min: -around / 8, max: around }),
      window: fc.integer({ min: 1, max: maxWindow }),
      cross: fc.boolean(),
      aligned: fc.boolean(),
    })
    .map(({ t, before, window, cross, aligned }) => {
      const from = aligned ? Math.floor((t - before) / MIN) * MIN : t - before;
      return { from, window: cross ? Math.min(maxWindow, Math.max(window, t - from + 30 * MIN)) : window };
    });
  return fc.oneof({ weight: 5, arbitrary: near }, { weight: 1, arbitrary: anywhere });
};

interface Case {
  cron: RefCron;
  zone: string;
  policy: string;
  from: number;
  window: number;
}

const caseArb = (withSeconds: boolean, maxWindow: number, around: number): fc.Arbitrary<Case> =>
  fc.constantFrom(...ZONES).chain((zone) =>
    fc
      .record({
        cron: cronArb(withSeconds),
        policy: fc.constantFrom(...POLICIES),
        span: windowArb(zone, around, maxWindow),
      })
      .map(({ span: w, ...rest }) => ({ ...rest, zone, ...w })),
  );

// ---------------------------------------------------------------------------------------------
// The comparison.
// ---------------------------------------------------------------------------------------------

const iso = (t: number): string => new Date(t).toISOString();

/**
 * The engine's instants equal the reference's, compared as numbers; only a mismatch is compared
 * again as ISO texts, for a readable diff (thousands of cases of up to 2,400 instants each).
 */
function expectInstants(actual: readonly number[], expected: readonly number[], label: string): void {
  if (actual.length === expected.length && actual.every((t, i) => t === expected[i])) return;
  expectInstants(actual, expected, label);
}

function check(c: Case): void {
  const text = cronText(c.cron);
  const to = c.from + c.window;
  const expected = referenceOccurrences(c.cron, c.zone, c.policy, c.from, to);
  const timing = compileTiming({ cron: text, timezone: c.zone, dst: c.policy }).timing;
  const actual: number[] = [];
  for (let t = timing.nextAfter(c.from); t !== null && t <= to; t = timing.nextAfter(t)) {
    actual.push(t);
    if (actual.length > expected.length) break;
  }
  const label = `${text} in ${c.zone} (${c.policy}) over (${iso(c.from)}, ${iso(to)}]`;
  expectInstants(actual, expected, label);
  expect(timing.countBetween(c.from, to), `count of ${label}`).toBe(expected.length);
  if (expected.length > 0) {
    // A sub-window ending at an occurrence, and the k-th last occurrence found by bisection.
    const k = 1 + (c.window % expected.length);
    expect(kthLast(timing, c.from, to, k), `kthLast(${k}) of ${label}`).toBe(expected[expected.length - k]);
    const mid = expected[Math.floor(expected.length / 2)] as number;
    expect(timing.countBetween(c.from, mid), `count up to ${iso(mid)} of ${label}`).toBe(
      Math.floor(expected.length / 2) + 1,
    );
  }
}

// CPU-bound runs of thousands of cases: 7 s alone on this 2-core machine, and once over the
// suite's 60 s at load 13. They cannot hang, so the bound is only how slow a loaded CI box may be.
const PROPERTY_TIMEOUT_MS = 240_000;

describe("the engine against the brute-force reference", { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it("the reference finds the transitions the tests are built around", () => {
    expect(TRANSITIONS["Europe/Berlin"]?.map(iso)).toEqual([
      "2025-03-30T01:00:00.000Z",
      "2025-10-26T01:00:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-10-25T01:00:00.000Z",
      "2027-03-28T01:00:00.000Z",
      "2027-10-31T01:00:00.000Z",
    ]);
    expect(TRANSITIONS["Australia/Lord_Howe"]).toHaveLength(6);
    expect(TRANSITIONS["Pacific/Chatham"]).toHaveLength(6);
    expect(TRANSITIONS["America/St_Johns"]).toHaveLength(6);
    expect(TRANSITIONS["Asia/Kolkata"]).toEqual([]);
    expect(TRANSITIONS["America/Sao_Paulo"]).toEqual([]);
    expect(TRANSITIONS.UTC).toEqual([]);
  });

  it("the reference agrees with the hand-worked Berlin nights", () => {
    const cron: RefCron = {
      seconds: null,
      minute: { text: "30", values: new Set([30]) },
      hour: { text: "2", values: new Set([2]) },
      dom: { text: "*", test: () => true },
      month: { text: "*", values: new Set(span(1, 12)) },
      dow: { text: "*", test: () => true },
    };
    const ref = (policy: string, from: string, to: string) =>
      referenceOccurrences(cron, "Europe/Berlin", policy, Date.parse(from), Date.parse(to)).map(iso);
    expect(ref("once", "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z")).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
    expect(ref("wall_clock", "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z")).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
    expect(ref("wall_clock", "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z")).toEqual([
      "2026-10-25T00:30:00.000Z",
      "2026-10-25T01:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
    ]);
    expect(ref("skip:last", "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z")).toEqual([
      "2026-10-25T01:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
    ]);
  });

  it("5-field expressions, per-minute reference, windows up to 40 hours", () => {
    fc.assert(
      fc.property(caseArb(false, 40 * HR, DAY_MS), (c) => check(c)),
      { seed: SEED, numRuns: 8000 },
    );
  });

  it("6-field expressions, per-second reference, windows up to 90 minutes across a transition", () => {
    fc.assert(
      fc.property(caseArb(true, 90 * MIN, HR), (c) => check(c)),
      { seed: SEED + 1, numRuns: 4000 },
    );
  });

  it("day fields over two years in UTC (Vixie rule, L, W, #, months), per-day reference", () => {
    fc.assert(
      fc.property(daysArb, fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2027, 0, 1) }), (days, start) => {
        const cron: RefCron = {
          seconds: null,
          minute: { text: "0", values: new Set([0]) },
          hour: { text: "0", values: new Set([0]) },
          ...days,
        };
        const dayMatches = makeDayMatcher(cron);
        const from = Math.floor(start / DAY_MS);
        const expected: number[] = [];
        for (let d = from + 1; d <= from + 730; d++) if (dayMatches(d)) expected.push(d * DAY_MS);
        const timing = compileTiming({ cron: cronText(cron) }).timing;
        const actual: number[] = [];
        for (
          let t = timing.nextAfter(from * DAY_MS);
          t !== null && t <= (from + 730) * DAY_MS;
          t = timing.nextAfter(t)
        ) {
          actual.push(t);
          if (actual.length > expected.length) break;
        }
        const label = cronText(cron);
        expectInstants(actual, expected, label);
        expect(timing.countBetween(from * DAY_MS, (from + 730) * DAY_MS), label).toBe(expected.length);
      }),
      { seed: SEED + 2, numRuns: 3000 },
    );
  });
});
