/**
 * The settings flags of `orbit schedule create` and `update` (docs/design.md § Settings), and the request body they
 * make. Values are sent as given: the server validates them and its message is the CLI's (exit 1),
 * so the CLI and the API refuse the same things with the same words.
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import type { ScheduleSettingsBody } from "../client/types.js";
import type { JsonObject } from "../domain/json.js";
import { parseJsonObjectArg, wholeNumber } from "./args.js";

export interface SettingsFlags {
  workflow?: string;
  version?: string;
  cron?: string;
  interval?: string;
  timezone?: string;
  dst?: string;
  input?: JsonObject;
  overlap?: string;
  concurrencyKey?: string;
  catchup?: string;
  maxCatchUp?: number;
  catchupWindow?: string;
  startAt?: string;
  endAt?: string;
  jitter?: string;
  paused?: boolean;
  pauseNote?: string;
  description?: string;
  runTimeout?: string;
  startTimeout?: string;
  pauseOnFailure?: number;
  notify?: string[];
  label?: Record<string, string>;
  unset?: string[];
}

/** Flag (camelCase, as commander names it) → setting name. */
const SETTING_OF: ReadonlyArray<[keyof SettingsFlags, string]> = [
  ["workflow", "workflow"],
  ["version", "version"],
  ["input", "input"],
  ["cron", "cron"],
  ["interval", "interval"],
  ["timezone", "timezone"],
  ["dst", "dst"],
  ["overlap", "overlap"],
  ["concurrencyKey", "concurrency_key"],
  ["catchup", "catchup"],
  ["maxCatchUp", "max_catch_up"],
  ["catchupWindow", "catchup_window"],
  ["startAt", "start_at"],
  ["endAt", "end_at"],
  ["jitter", "jitter"],
  ["paused", "paused"],
  ["pauseNote", "pause_note"],
  ["description", "description"],
  ["runTimeout", "run_timeout"],
  ["startTimeout", "start_timeout"],
  ["pauseOnFailure", "pause_on_failure"],
  ["notify", "notify"],
  ["label", "labels"],
];

/** The optional settings `update --unset` may clear. */
export const UNSETTABLE = [
  "version",
  "timezone",
  "dst",
  "concurrency_key",
  "max_catch_up",
  "catchup_window",
  "start_at",
  "end_at",
  "jitter",
  "pause_note",
  "description",
  "run_timeout",
  "start_timeout",
  "pause_on_failure",
  "notify",
  "labels",
] as const;

/** Adds the settings flags; `update` makes every one optional and adds `--no-paused` and `--unset`. */
export function addSettingsFlags(cmd: Command, mode: "create" | "update"): Command {
  const workflow = "workflow to start (registered with `orbit workflow register` or by a worker)";
  if (mode === "create") cmd.requiredOption("--workflow <name>", workflow);
  else cmd.option("--workflow <name>", workflow);
  cmd
    .option("--version <semver>", "pin a workflow version (default: the latest registered at each start)")
    .addOption(new Option("--cron <expression>", "cron expression (5 fields, or 6 with seconds)").conflicts("interval"))
    .option("--interval <duration>", "fixed interval such as 10s, 15m or 1h30m, aligned to --start-at or the epoch")
    .option("--timezone <tz>", "IANA time zone of the cron expression (default: UTC)")
    .option("--dst <mode>", "DST handling: once, wall_clock or <gap>:<repeat> (default: once)")
    .option("--input <json>", "workflow input: JSON, or @file holding it (default: {})", parseJsonObjectArg)
    .option("--overlap <policy>", "skip, allow, cancel_previous, buffer_one or buffer_all (default: skip)")
    .option("--concurrency-key <key>", "serialise with every schedule naming the same key")
    .option("--catchup <policy>", "skip_missed, run_once or catch_up (default: skip_missed)")
    .option("--max-catch-up <n>", "with --catchup catch_up: start at most n missed occurrences", wholeNumber(0, 1e9))
    .option("--catchup-window <duration>", "a missed occurrence older than this never starts (10s to 365d)")
    .option("--start-at <time>", "RFC 3339: no occurrence before it (an interval's first occurrence)")
    .option("--end-at <time>", "RFC 3339: no occurrence after it")
    .option("--jitter <duration>", "delay each fire by a deterministic amount below this duration")
    .option("--paused", mode === "create" ? "create the schedule paused" : "pause the schedule")
    .option("--pause-note <text>", "why the schedule is paused")
    .option("--description <text>", "free text, at most 1000 characters")
    .option("--run-timeout <duration>", "the whole execution must end within it, retries included (1s to 365d)")
    .option("--start-timeout <duration>", "a worker must take the execution within it (1s to 365d)")
    .option("--pause-on-failure <n>", "pause after n consecutive failed executions", wholeNumber(0, 1e9))
    .option(
      "--notify <url>",
      "webhook called on failure, timeout, dead letter, pause and recovery (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--label <key=value>",
      mode === "create" ? "a label (repeatable)" : "a label (repeatable; the labels given replace the schedule's)",
      labelArg,
    );
  if (mode === "update") {
    cmd
      .option("--no-paused", "resume the schedule (as `orbit schedule resume`)")
      .option(
        "--unset <setting>",
        `clear an optional setting (repeatable): ${UNSETTABLE.join(", ")}`,
        (value: string, previous: string[] = []) => [...previous, value],
      );
  }
  return cmd;
}

/** `--label key=value`, accumulated into one object (the server validates names and values). */
function labelArg(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`"${value}" is not key=value`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/** The request body: the settings the flags give, `null` for each `--unset`. */
export function settingsBody(flags: SettingsFlags): ScheduleSettingsBody {
  const body: ScheduleSettingsBody = {};
  for (const [flag, setting] of SETTING_OF) {
    const value = flags[flag];
    if (value !== undefined) body[setting] = value as ScheduleSettingsBody[string];
  }
  for (const setting of flags.unset ?? []) body[setting.replace(/-/g, "_")] = null;
  return body;
}
