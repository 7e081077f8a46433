/**
 * Local wall time of an instant, as `schedule preview` prints it next to the UTC time:
 * `Mon 2026-11-16 02:00:00 +01:00`. Integer arithmetic over the zone's offset table, with the
 * current offset period and the current day's text cached, so a million lines cost no Intl call.
 */
import { civilFromDays, DAY, HOUR, MINUTE, SECOND, weekdayOfDays } from "../time/civil.js";
import { emptyPeriod, type Period, type Zone } from "../time/zone.js";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const TWO_DIGITS: readonly string[] = Array.from({ length: 60 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));

const two = (n: number): string => TWO_DIGITS[n] as string;

function yearText(y: number): string {
  if (y >= 0 && y < 10000) return `${y}`.padStart(4, "0");
  return `${y}`;
}

/** `+01:00`, `-03:30`, `+00:00`; seconds only when the offset has them (old local mean times). */
export function offsetText(offsetMs: number): string {
  const sign = offsetMs < 0 ? "-" : "+";
  const abs = Math.abs(Math.round(offsetMs / SECOND));
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  const s = abs % 60;
  return `${sign}${two(h)}:${two(m)}${s === 0 ? "" : `:${two(s)}`}`;
}

export class LocalTimeFormatter {
  private readonly period: Period = emptyPeriod();
  private hasPeriod = false;
  private offset = Number.NaN;
  private offsetLabel = "";
  private day = Number.NaN;
  private dayLabel = "";
  private readonly civil = [0, 0, 0];

  constructor(private readonly zone: Zone) {}

  /** `Mon 2026-11-16 02:00:00 +01:00` (with `.mmm` when the milliseconds are not zero). */
  format(t: number): string {
    const p = this.period;
    if (!this.hasPeriod || t < p.start || t >= p.end) {
      this.zone.periodAt(t, p);
      this.hasPeriod = true;
    }
    if (p.offset !== this.offset) {
      this.offset = p.offset;
      this.offsetLabel = offsetText(p.offset);
    }
    const local = t + p.offset;
    const days = Math.floor(local / DAY);
    if (days !== this.day) {
      this.day = days;
      civilFromDays(days, this.civil);
      const [y, m, d] = this.civil as [number, number, number];
      this.dayLabel = `${WEEKDAYS[weekdayOfDays(days)]} ${yearText(y)}-${two(m)}-${two(d)} `;
    }
    let rest = local - days * DAY;
    const h = Math.floor(rest / HOUR);
    rest -= h * HOUR;
    const min = Math.floor(rest / MINUTE);
    rest -= min * MINUTE;
    const s = Math.floor(rest / SECOND);
    const ms = rest - s * SECOND;
    const fraction = ms === 0 ? "" : `.${`${ms}`.padStart(3, "0")}`;
    return `${this.dayLabel}${two(h)}:${two(min)}:${two(s)}${fraction} ${this.offsetLabel}`;
  }
}
