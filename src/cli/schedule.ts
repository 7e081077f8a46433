/**
 * `orbit schedule …` (docs/cli.md): create, get, list, update, pause, resume, trigger, delete,
 * occurrences, backfill, apply and preview. The commands that talk to the server resolve
 * `--server` / `--token` with clientFor() and go through src/client/; `preview` runs offline.
 */
import type { Command } from "commander";
import { addConnectionOptions } from "./connection.js";
import type { CliIO } from "./io.js";
import { addActionCommands } from "./schedule-actions.js";
import { addApplyCommand } from "./schedule-apply.js";
import { addCrudCommands } from "./schedule-crud.js";
import { addPreviewCommand } from "./schedule-preview.js";

export function registerScheduleCommands(program: Command, io: CliIO): void {
  const schedule = program
    .command("schedule")
    .description("manage schedules: cron and interval timings that start workflow executions");
  addCrudCommands(schedule, io);
  addActionCommands(schedule, io);
  addApplyCommand(schedule, io);
  for (const command of schedule.commands) addConnectionOptions(command);
  addPreviewCommand(schedule, io);
}
