/**
 * `npm run bench:dst-compare`: which instants Orbit (`dst: once` and `dst: wall_clock`), croner and
 * cron-parser return around the 2026 DST changes of Europe/Berlin, America/New_York and
 * Australia/Lord_Howe. Prints Markdown: one table per (night, expression) listing every instant any
 * of them returns, then a summary of where croner and cron-parser disagree with Orbit. Orbit follows
 * docs/design.md § Time zones and DST; the libraries are compared with it, not the other way round.
 */
import { cronerJob, cronParserIterator, errorText, iso, orbitTiming, toCronerExpression } from "./lib/cron-libs.js";

const HOUR = 3_600_000;
const MAX_RESULTS = 64;

/** Local dates of the 2026 changes. */
const NIGHTS: ReadonlyArray<{ zone: string; date: string }> = [
  { zone: "Europe/Berlin", date: "2026-03-29" },
  { zone: "Europe/Berlin", date: "2026-10-25" },
  { zone: "America/New_York", date: "2026-03-08" },
  { zone: "America/New_York", date: "2026-11-01" },
  { zone: "Australia/Lord_Howe", date: "2026-04-05" },
  { zone: "Australia/Lord_Howe", date: "2026-10-04" },
];

/** Each expression with the window (hours before, hours after the change) whose occurrences are shown. */
const EXPRESSIONS: ReadonlyArray<{ expr: string; before: number; after: number }> = [
  { expr: "30 2 * * *", before: 30, after: 30 },
  { expr: "0 2 * * *", before: 30, after: 30 },
  { expr: "*/15 * * * *", before: 0.5, after: 1.5 },
  { expr: "0 30 1 * * *", before: 30, after: 30 },
];

type Source = "Orbit once" | "Orbit wall_clock" | "croner" | "cron-parser";
const SOURCES: readonly Source[] = ["Orbit once", "Orbit wall_clock", "croner", "cron-parser"];

interface Outcome {
  instants: number[];
  error: string | null;
}

/** Offset in minutes at `t`, straight from Intl (independent of Orbit's zone table). */
function intlOffsetMinutes(zone: string, t: number): number {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(t);
  const name = parts.find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /^GMT([+-])(\d\d):(\d\d)$/.exec(name);
  if (m === null) return 0;
  return (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

function formatOffset(min: number): string {
  const a = Math.abs(min);
  return `${min < 0 ? "-" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
}

/** `2026-03-29 03:30 +02:00` */
function local(zone: string, t: number): string {
  const off = intlOffsetMinutes(zone, t);
  const wall = new Date(t + off * 60_000).toISOString();
  return `${wall.slice(0, 10)} ${wall.slice(11, 16)} ${formatOffset(off)}`;
}

/** The instant of the offset change on a local date (searched minute by minute through Intl). */
function changeOn(zone: string, date: string): { at: number; before: number; after: number } {
  const from = Date.parse(`${date}T00:00:00Z`) - 14 * HOUR;
  const to = from + 48 * HOUR;
  let prev = intlOffsetMinutes(zone, from);
  for (let t = from + 60_000; t < to; t += 60_000) {
    const off = intlOffsetMinutes(zone, t);
    if (off !== prev) return { at: t, before: prev, after: off };
    prev = off;
  }
  throw new Error(`no offset change in ${zone} around ${date}`);
}

function collect(next: (after: number) => number | null, from: number, to: number): Outcome {
  const instants: number[] = [];
  let t = from;
  try {
    while (instants.length < MAX_RESULTS) {
      const n = next(t);
      if (n === null || n > to) break;
      if (n <= t) return { instants, error: `returned ${iso(n)}, not after ${iso(t)}` };
      instants.push(n);
      t = n;
    }
    return { instants, error: null };
  } catch (e) {
    return { instants, error: errorText(e) };
  }
}

function outcomes(expr: string, zone: string, from: number, to: number): Record<Source, Outcome> {
  const once = orbitTiming(expr, zone, "once");
  const wall = orbitTiming(expr, zone, "wall_clock");
  const job = cronerJob(expr, zone);
  let parser: ReturnType<typeof cronParserIterator> | null = null;
  return {
    "Orbit once": collect((t) => once.nextAfter(t), from, to),
    "Orbit wall_clock": collect((t) => wall.nextAfter(t), from, to),
    croner: collect((t) => job.nextRun(new Date(t))?.getTime() ?? null, from, to),
    "cron-parser": collect(
      (t) => {
        // One iterator, as the library is meant to be used: each next() continues from the last one.
        if (parser === null) parser = cronParserIterator(expr, zone, t);
        return parser.next().getTime();
      },
      from,
      to,
    ),
  };
}

function sameSet(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function describeDiff(zone: string, got: number[], want: number[]): string {
  const missing = want.filter((t) => !got.includes(t)).map((t) => local(zone, t).slice(11));
  const extra = got.filter((t) => !want.includes(t)).map((t) => local(zone, t).slice(11));
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`misses ${missing.join(", ")}`);
  if (extra.length > 0) parts.push(`adds ${extra.join(", ")}`);
  return parts.length > 0 ? parts.join("; ") : "same instants, different order";
}

/** How a library's answer relates to Orbit's two modes. */
function verdict(zone: string, o: Outcome, once: number[], wall: number[]): string {
  if (o.error !== null) {
    const got = o.instants.length > 0 ? `, after returning ${o.instants.length}` : "";
    return `**throws** "${o.error}"${got}`;
  }
  const asOnce = sameSet(o.instants, once);
  const asWall = sameSet(o.instants, wall);
  if (asOnce && asWall) return "agrees";
  if (asOnce) return "= once";
  if (asWall) return "= wall_clock";
  return `**differs** from once (${describeDiff(zone, o.instants, once)}) and wall_clock (${describeDiff(zone, o.instants, wall)})`;
}

function main(): void {
  console.log(`# DST comparison (node ${process.version}, ICU time-zone data ${process.versions.tz ?? "?"})`);
  console.log("");
  const summary: string[] = [];
  for (const night of NIGHTS) {
    const change = changeOn(night.zone, night.date);
    const kind = change.after > change.before ? "spring forward (gap)" : "fall back (repeat)";
    console.log(
      `## ${night.zone} ${night.date}: ${kind}, ${formatOffset(change.before)} → ${formatOffset(change.after)} at ${iso(change.at)}`,
    );
    console.log("");
    for (const { expr, before, after } of EXPRESSIONS) {
      const from = change.at - before * HOUR;
      const to = change.at + after * HOUR;
      const res = outcomes(expr, night.zone, from, to);
      const all = [...new Set(SOURCES.flatMap((s) => res[s].instants))].sort((a, b) => a - b);
      const croner = toCronerExpression(expr) === expr ? "" : ` (croner: \`${toCronerExpression(expr)}\`)`;
      console.log(`### \`${expr}\`${croner} · ${night.zone} ${night.date}, instants in (${iso(from)}, ${iso(to)}]`);
      console.log("");
      console.log(`| instant (UTC) | local | ${SOURCES.join(" | ")} |`);
      console.log(`| --- | --- | ${SOURCES.map(() => ":---:").join(" | ")} |`);
      for (const t of all) {
        const marks = SOURCES.map((s) => (res[s].instants.includes(t) ? "✓" : "·"));
        console.log(`| ${iso(t)} | ${local(night.zone, t)} | ${marks.join(" | ")} |`);
      }
      for (const s of SOURCES) {
        const e = res[s].error;
        if (e !== null) console.log(`| ${s} throws | ${e} | ${SOURCES.map((x) => (x === s ? "✗" : "")).join(" | ")} |`);
      }
      console.log("");
      const once = res["Orbit once"].instants;
      const wall = res["Orbit wall_clock"].instants;
      for (const lib of ["croner", "cron-parser"] as const) {
        summary.push(
          `| ${night.zone} ${night.date} | \`${expr}\` | ${lib} | ${verdict(night.zone, res[lib], once, wall)} |`,
        );
      }
    }
  }
  console.log("## Summary: each library against Orbit's two modes");
  console.log("");
  console.log("`agrees`: once and wall_clock give the same instants here and the library gives them too.");
  console.log("");
  console.log("| night | expression | library | compared with Orbit |");
  console.log("| --- | --- | --- | --- |");
  for (const line of summary) console.log(line);
}

main();
