/**
 * Proleptic Gregorian calendar arithmetic on integers (no Date objects on the hot path).
 * Algorithms after Howard Hinnant's `days_from_civil` / `civil_from_days`.
 */

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Days since 1970-01-01 of the civil date y-m-d (m 1-12, d 1-31). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const scratch = [0, 0, 0];

/** Year of the civil date `days` days after 1970-01-01. */
export function yearOfDays(days: number): number {
  civilFromDays(days, scratch);
  return scratch[0] as number;
}

/** Writes [year, month 1-12, day 1-31] of `days` into `out` (reused to avoid allocation). */
export function civilFromDays(days: number, out: number[]): void {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  out[0] = yoe + era * 400 + (m <= 2 ? 1 : 0);
  out[1] = m;
  out[2] = d;
}

export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : (MONTH_DAYS[m - 1] as number);
}

/** Day of week of `days` since the epoch: 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). */
export function weekdayOfDays(days: number): number {
  return (((days + 4) % 7) + 7) % 7;
}

/** First instant of UTC calendar year `y`. */
export function yearStartMs(y: number): number {
  return daysFromCivil(y, 1, 1) * DAY;
}

/** UTC calendar year containing the instant `ms`. */
export function yearOfMs(ms: number): number {
  return yearOfDays(Math.floor(ms / DAY));
}
