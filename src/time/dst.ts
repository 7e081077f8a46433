/** DST modes (docs/design.md § Time zones and DST): what a cron occurrence does in a gap and in a repeated hour. */
import { invalidSchedule } from "../domain/errors.js";
import { suggestKey } from "../domain/suggest.js";

export type GapRule = "shift" | "skip";
export type RepeatRule = "first" | "last" | "both";

export interface DstPolicy {
  /** A wall time that does not exist: `shift` fires at the same distance after the change, `skip` does not fire. */
  readonly gap: GapRule;
  /** A wall time that occurs twice: fire at the `first`, the `last`, or `both` instants. */
  readonly repeat: RepeatRule;
}

/** The default (ORBIT): `shift:first`. */
export const DST_ONCE: DstPolicy = Object.freeze({ gap: "shift", repeat: "first" });
/** Orion's wall-clock semantics: `skip:both`. */
export const DST_WALL_CLOCK: DstPolicy = Object.freeze({ gap: "skip", repeat: "both" });

const GAPS: readonly string[] = ["shift", "skip"];
const REPEATS: readonly string[] = ["first", "last", "both"];
/** Every DST mode's name: `once`, `wall_clock` and each `<gap>:<repeat>`. */
export const DST_MODE_NAMES: readonly string[] = [
  "once",
  "wall_clock",
  ...GAPS.flatMap((gap) => REPEATS.map((repeat) => `${gap}:${repeat}`)),
];

/** Parses `once`, `wall_clock` or `<gap>:<repeat>` (`shift:last`, `skip:first` …). */
export function parseDst(text: string): DstPolicy {
  if (text === "once") return DST_ONCE;
  if (text === "wall_clock") return DST_WALL_CLOCK;
  const [gap, repeat, extra] = text.split(":");
  if (
    extra === undefined &&
    gap !== undefined &&
    repeat !== undefined &&
    GAPS.includes(gap) &&
    REPEATS.includes(repeat)
  ) {
    return Object.freeze({ gap: gap as GapRule, repeat: repeat as RepeatRule });
  }
  // The nearest mode of a misspelt one (`wall_clok`), here so every caller's refusal says it: a
  // create's, an update's, and both previews' (docs/scheduling.md § Other products' names).
  const hint = suggestKey(text, DST_MODE_NAMES);
  throw invalidSchedule(
    `dst "${text}" is not a DST mode: use once, wall_clock, or <gap>:<repeat> with gap shift or skip and repeat first, last or both (e.g. "shift:last")${hint === null ? "" : `; did you mean "${hint}"?`}`,
  );
}

/** The canonical name of a policy: `once`, `wall_clock` or `<gap>:<repeat>`. */
export function dstName(p: DstPolicy): string {
  if (p.gap === "shift" && p.repeat === "first") return "once";
  if (p.gap === "skip" && p.repeat === "both") return "wall_clock";
  return `${p.gap}:${p.repeat}`;
}
