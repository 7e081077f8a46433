/**
 * The settings flags of `orbit schedule create` and `update`, and the request body they make, both
 * derived from the settings table (src/domain/setting-table.ts): a setting with a `flag` there has
 * its flag here. Values are sent as given: the server validates them and its message is the
 * CLI's (exit 1), so the CLI and the API refuse the same things with the same words.
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import type { ScheduleSettingsBody } from "../client/types.js";
import { WHOLE_SETTING_RANGES } from "../domain/schedule.js";
import {
  type FlagValue,
  SCHEDULE_SETTINGS,
  type SettingDeclaration,
  type SettingFlag,
  type SettingKey,
  UNSETTABLE_SETTINGS,
} from "../domain/setting-table.js";
import { parseJsonObjectArg, repeatable, wholeNumber } from "./args.js";

/** What commander gives the action: each flag's value under its camelCase name, and `--unset`. */
export type SettingsFlags = Record<string, unknown> & { unset?: string[] };

/** The settings `update --unset` may clear. */
export const UNSETTABLE = UNSETTABLE_SETTINGS;

/** `--max-catch-up <n>` → `maxCatchUp`, as commander names an option's value. */
function attributeName(spec: string): string {
  const long = spec.split(/[ <[]/)[0]?.replace(/^--/, "") ?? "";
  return long.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

const FLAGGED = (Object.entries(SCHEDULE_SETTINGS) as [SettingKey, SettingDeclaration][]).flatMap(([key, d]) =>
  d.flag === undefined ? [] : [{ key, flag: d.flag, attribute: attributeName(d.flag.spec) }],
);

/** `--label key=value`, accumulated into one object (the server validates names and values). */
const keyValueArg = repeatable(function keyValueArg(
  value: string,
  previous: Record<string, string> = {},
): Record<string, string> {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`"${value}" is not key=value`);
  const key = value.slice(0, eq);
  // `--label team=a --label team=b` kept b without a word, as a repeated JSON key did (a tester).
  if (Object.hasOwn(previous, key))
    throw new InvalidArgumentError(`the key "${key}" is given twice; give each key once`);
  return { ...previous, [key]: value.slice(eq + 1) };
});

const repeat = repeatable((value: string, previous: string[] = []): string[] => [...previous, value]);

/**
 * `--unset <setting>`, repeatable: only a setting that may be cleared, said before anything is
 * sent (exit 2). `--unset bogus` went to the server (exit 1), and `--unset workflow` came back as
 * "workflow must be a string".
 */
const unsetArg = repeatable(function unsetArg(value: string, previous: string[] = []): string[] {
  const key = value.replace(/-/g, "_");
  if (!(UNSETTABLE as readonly string[]).includes(key)) {
    const why = Object.hasOwn(SCHEDULE_SETTINGS, key)
      ? `a schedule's ${value} is required and cannot be cleared`
      : `no setting is named ${value}`;
    throw new InvalidArgumentError(`${why}; --unset takes one of ${UNSETTABLE.join(", ")}`);
  }
  return [...previous, value];
});

/** The settings whose flag takes a whole number: a new one does not compile without its range. */
type WholeSetting = {
  [K in SettingKey]: (typeof SCHEDULE_SETTINGS)[K] extends { flag: { value: "whole" } } ? K : never;
}[SettingKey];

type Parser = (value: string, previous: unknown) => unknown;
const PARSERS: Record<Exclude<FlagValue, "text" | "switch" | "whole">, Parser> = {
  "json-object": parseJsonObjectArg,
  repeat: repeat as Parser,
  "key-value": keyValueArg as Parser,
};

function option(key: SettingKey, flag: SettingFlag, mode: "create" | "update"): Option {
  let help = typeof flag.help === "string" ? flag.help : flag.help[mode];
  // On update a flag left out keeps the schedule's value: a default there would read as what
  // leaving it out sets (`--timezone … (default: UTC)`).
  if (mode === "update") help = help.replace(/ \(default: [^)]*\)/g, "");
  if (key === "workflow") help += "; Name@1.0.0 pins the version, as --version 1.0.0 does";
  const value = flag.value ?? "text";
  const range = value === "whole" ? WHOLE_SETTING_RANGES[key as WholeSetting] : undefined;
  if (range !== undefined) help += ` (${range[0]} to ${range[1]})`;
  const opt = new Option(flag.spec, help);
  if (range !== undefined) opt.argParser(wholeNumber(range[0], range[1]));
  else if (value !== "text" && value !== "switch" && value !== "whole") opt.argParser<unknown>(PARSERS[value]);
  if (flag.conflicts !== undefined) opt.conflicts(flag.conflicts);
  if (flag.required && mode === "create") opt.makeOptionMandatory();
  return opt;
}

/** Adds the settings flags; `update` makes every one optional and adds `--no-paused` and `--unset`. */
export function addSettingsFlags(cmd: Command, mode: "create" | "update"): Command {
  for (const { key, flag } of FLAGGED) cmd.addOption(option(key, flag, mode));
  if (mode === "update") {
    cmd
      .option("--no-paused", "resume the schedule (as `orbit schedule resume`)")
      .option("--unset <setting>", `clear an optional setting (repeatable): ${UNSETTABLE.join(", ")}`, unsetArg);
  }
  return cmd;
}

/**
 * The first setting an update both sets and `--unset`s, as `--timezone and --unset timezone`, or
 * null. Either answer would drop a flag the user typed, so the command refuses it (exit 2).
 */
export function setAndUnset(flags: SettingsFlags): string | null {
  for (const setting of flags.unset ?? []) {
    const key = setting.replace(/-/g, "_");
    const given = FLAGGED.find((f) => f.key === key && flags[f.attribute] !== undefined);
    if (given !== undefined) return `${given.flag.spec.split(/[ <[]/)[0]} and --unset ${setting}`;
  }
  return null;
}

/** The request body: the settings the flags give, `null` for each `--unset`. */
export function settingsBody(flags: SettingsFlags): ScheduleSettingsBody {
  const body: ScheduleSettingsBody = {};
  for (const { key, attribute } of FLAGGED) {
    const value = flags[attribute];
    if (value !== undefined) body[key] = value as ScheduleSettingsBody[string];
  }
  for (const setting of flags.unset ?? []) body[setting.replace(/-/g, "_")] = null;
  return body;
}
