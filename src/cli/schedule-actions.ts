/**
 * `orbit schedule pause|resume|trigger|backfill`: the changes that are not settings. Each prints a
 * one-line confirmation.
 */
import type { Command } from "commander";
import type { ScheduleJson } from "../domain/api-json.js";
import type { JsonObject } from "../domain/json.js";
import { checked, SCHEDULE_FIELDS } from "./answer-shape.js";
import { addWriteOptions, parseJsonObjectArg, printJson, type WriteFlags, writeOptionsOf } from "./args.js";
import { clientFor } from "./connection.js";
import type { CliIO } from "./io.js";
import { oneLine } from "./safe-text.js";

interface JsonFlag {
  json?: boolean;
}

export function addActionCommands(schedule: Command, io: CliIO): void {
  addWriteOptions(
    schedule
      .command("pause")
      .description("stop firing until resumed (a trigger still works)")
      .argument("<schedule-id>")
      .option("--note <text>", "why it is paused (shown by `orbit schedule get`)")
      .option("--json", "print the server's JSON"),
  ).action(async (id: string, opts: { note?: string } & WriteFlags & JsonFlag, cmd: Command) => {
    const body = opts.note === undefined ? {} : { note: opts.note };
    const client = clientFor(cmd, io);
    const before = opts.json === true ? null : await client.getSchedule(id).catch(() => null);
    const s = await client.pauseSchedule(id, body, writeOptionsOf(opts));
    if (opts.json === true) return printJson(io, s);
    checked(s, "the schedule", SCHEDULE_FIELDS);
    await io.stdout.write(`${oneLine(pauseText(id, opts.note, before))}\n`);
  });

  addWriteOptions(
    schedule
      .command("resume")
      .description("fire again, from the next occurrence after now")
      .argument("<schedule-id>")
      .option("--catch-up", "apply the schedule's catch-up policy to the occurrences missed while paused")
      .option("--json", "print the server's JSON"),
  ).action(async (id: string, opts: { catchUp?: boolean } & WriteFlags & JsonFlag, cmd: Command) => {
    const body = opts.catchUp === true ? { catch_up: true } : {};
    const client = clientFor(cmd, io);
    const before = opts.json === true ? null : await client.getSchedule(id).catch(() => null);
    const s = await client.resumeSchedule(id, body, writeOptionsOf(opts));
    if (opts.json === true) return printJson(io, s);
    checked(s, "the schedule", SCHEDULE_FIELDS);
    // Not paused before: the server changed nothing (actions.ts keeps such a row as it is).
    const text =
      before?.paused !== false
        ? `resumed ${id} (${whatResumes(s)})`
        : s.state === "ended"
          ? `${id} is not paused (${whatResumes(s)})`
          : `${id} is already active (${whatResumes(s)})`;
    await io.stdout.write(`${oneLine(text)}\n`);
  });

  addWriteOptions(
    schedule
      .command("trigger")
      .description("start an execution now, under the overlap policy (also while paused)")
      .argument("<schedule-id>")
      .option(
        "--input <json>",
        "input for this execution only: JSON, @file holding it, or @- for the standard input",
        parseJsonObjectArg,
      )
      .option("--json", "print the server's JSON")
      .addHelpText(
        "after",
        `
An execution that the overlap policy does not start is not an error (exit 0):
  $ orbit schedule trigger nightly-orders
  not started: the previous execution of nightly-orders is still running (overlap: skip)`,
      ),
  ).action(async (id: string, opts: { input?: JsonObject } & WriteFlags & JsonFlag, cmd: Command) => {
    const body = opts.input === undefined ? {} : { input: opts.input };
    const r = await clientFor(cmd, io).triggerSchedule(id, body, writeOptionsOf(opts));
    if (opts.json === true) return printJson(io, r);
    checked(r, "the trigger's result", { started: "boolean" });
    if (!r.started && typeof r.message !== "string") checked(r, "the trigger's result", { overlap: "text" });
    const text = r.started
      ? `started execution ${r.execution_id ?? "?"}`
      : (r.message ?? `not started (overlap: ${r.overlap})`);
    await io.stdout.write(`${oneLine(text)}\n`);
  });

  addWriteOptions(
    schedule
      .command("backfill")
      .description("start the occurrences of a past range (both ends inclusive) under their own ids")
      .argument("<schedule-id>")
      .requiredOption("--start-at <time>", "RFC 3339: the first occurrence to consider")
      .requiredOption("--end-at <time>", "RFC 3339: the last occurrence to consider")
      .option("--json", "print the server's JSON")
      .addHelpText(
        "after",
        `
An occurrence whose execution exists is skipped, so repeating a backfill starts nothing twice:
  $ orbit schedule backfill nightly-orders --start-at 2026-11-01T00:00:00Z --end-at 2026-11-07T23:59:59Z`,
      ),
  ).action(async (id: string, opts: { startAt: string; endAt: string } & WriteFlags & JsonFlag, cmd: Command) => {
    const client = clientFor(cmd, io);
    const r = await client.backfillSchedule(id, { start_at: opts.startAt, end_at: opts.endAt }, writeOptionsOf(opts));
    if (opts.json === true) return printJson(io, r);
    checked(r, "the backfill's result", {
      start_at: "text",
      end_at: "text",
      occurrences: "number",
      started: "number",
      already_existed: "number",
    });
    await io.stdout.write(
      `backfilled ${id} from ${r.start_at} to ${r.end_at}: ${r.occurrences} occurrence${r.occurrences === 1 ? "" : "s"}, ${r.started} started, ${r.already_existed} already existed\n`,
    );
    if (r.occurrences === 0) {
      const s = await client.getSchedule(id).catch(() => null);
      await io.stderr.write(`(${noOccurrenceWhy(id, r.start_at, r.end_at, s)})\n`);
    }
  });
}

/**
 * Why a backfill's range held no occurrence: "0 occurrences, 0 started" of a range before the
 * schedule's start_at said nothing more (a tester). `s` is the schedule when it could be read.
 */
export function noOccurrenceWhy(
  id: string,
  from: string,
  to: string,
  s: { start_at?: string | null; end_at?: string | null } | null,
): string {
  const starts = typeof s?.start_at === "string" ? s.start_at : null;
  const ends = typeof s?.end_at === "string" ? s.end_at : null;
  if (starts !== null && Date.parse(starts) > Date.parse(to)) {
    return `the range ends before ${id} starts: its start_at is ${starts}`;
  }
  if (ends !== null && Date.parse(ends) < Date.parse(from)) {
    return `the range begins after ${id} ends: its end_at is ${ends}`;
  }
  return `no occurrence of ${id}'s timing falls in that range: \`orbit schedule get ${id}\` shows its timing`;
}

/**
 * What `orbit schedule pause` says, as `orbit cancel` does: the server answers a pause of a paused
 * schedule as it answers the first (the schedule, paused), so only the schedule read before tells
 * them apart. `paused nightly-orders` said a change for nothing done (a tester). A note given to a
 * paused schedule replaces its note, the one change made. Without the read (an error, or an
 * identity that may not read it), the pause is said as before.
 */
function pauseText(id: string, note: string | undefined, before: ScheduleJson | null): string {
  if (before?.paused !== true) return `paused ${id}${note === undefined ? "" : ` (${note})`}`;
  if (note !== undefined && note !== before.pause_note) return `${id} is already paused; its note is now: ${note}`;
  return `${id} is already paused${before.pause_note === undefined ? "" : ` (note: ${before.pause_note})`}`;
}

/**
 * What a resume starts next. What the pause held in the buffer is due at once (docs/scheduling.md §
 * Pause and the buffer): say so, rather than print its past occurrence as the next fire.
 */
function whatResumes(s: ScheduleJson): string {
  const held = s.buffered ?? [];
  if (held.length === 0) return s.next_fire_at === null ? `no next fire: ${s.state}` : `next fire ${s.next_fire_at}`;
  const which = held.length === 1 ? `buffered ${held[0]}` : `${held.length} buffered`;
  const upcoming = s.state === "ended" ? undefined : s.next_fire_times[0];
  return `${which} starts once nothing runs${upcoming === undefined ? "" : `; next fire ${upcoming}`}`;
}
