/**
 * `orbit schedule …` (SPEC §7): create, get, list, update, pause, resume, trigger, delete,
 * occurrences, backfill, apply and preview. Each subcommand is added here; the ones that talk to the
 * server resolve `--server` / `--token` with resolveConnection() and go through src/client/.
 * Only `preview` (offline) exists so far.
 */
import type { Command } from "commander";
import type { CliIO } from "./io.js";
import { addPreviewCommand } from "./schedule-preview.js";

export function registerScheduleCommands(program: Command, io: CliIO): void {
  const schedule = program
    .command("schedule")
    .description("manage schedules: cron and interval timings that start workflow executions")
    .configureHelp({ showGlobalOptions: true });
  addPreviewCommand(schedule, io);
}
