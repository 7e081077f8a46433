/**
 * The local wall clock of an instant in a zone, read from ICU (Intl), for the tests' own oracles:
 * the time property tests and the scheduler's reference model check src/time against it, so it
 * shares nothing with src/time/zone.ts.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

export interface WallFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall clock's fields at instant `t` (ms) in `zone` (month 1-12, hour 0-23). */
export function intlWallFields(zone: string, t: number): WallFields {
  let dtf = formatters.get(zone);
  if (dtf === undefined) {
    dtf = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, dtf);
  }
  const f: Record<string, number> = {};
  for (const p of dtf.formatToParts(t)) if (p.type !== "literal") f[p.type] = Number(p.value);
  return f as unknown as WallFields;
}
