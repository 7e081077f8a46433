/**
 * `orbit start`, `orbit retry`, `orbit events` and `orbit workers` (docs/cli.md, docs/outcomes.md).
 */
import type { Command } from "commander";
import type { ExecutionEventJson, WorkerJson } from "../client/types.js";
import { stringifyJsonText } from "../domain/json-text.js";
import { checked, EVENT_FIELDS, EXECUTION_FIELDS, WORKER_FIELDS } from "./answer-shape.js";
import { addWriteOptions, parseJsonObjectArg, printJson, type WriteFlags, writeOptionsOf } from "./args.js";
import { addConnectionOptions, clientFor } from "./connection.js";
import { shortDuration } from "./durations.js";
import { sayHiddenList } from "./hidden-lists.js";
import type { CliIO } from "./io.js";
import { oneLine } from "./safe-text.js";
import { type Column, table } from "./table.js";
import { pinnedWorkflow } from "./workflow-ref.js";

export const EVENT_COLUMNS: readonly Column[] = [
  { header: "SEQ", width: 5 },
  { header: "AT", width: 26 },
  { header: "TYPE", width: 26 },
  { header: "DATA", width: 0 },
];

export function eventTable(events: readonly ExecutionEventJson[]): string {
  return table(
    EVENT_COLUMNS,
    events.map((e) => [String(e.seq), e.at, e.type, stringifyJsonText(e.data)]),
  );
}

export const WORKER_COLUMNS: readonly Column[] = [
  { header: "WORKER", width: 34 },
  { header: "STATUS", width: 8 },
  { header: "LAST SEEN", width: 10 },
  { header: "RUNNING", width: 8 },
  { header: "WORKFLOWS", width: 0 },
];

/**
 * LAST SEEN is `now − last_seen_at` (`3.1s` ago). STATUS reads `stuck` for a live worker with no
 * free slot that holds no task, explained under the table.
 */
export function workerTable(workers: readonly WorkerJson[], now: number): string {
  const note = workers.some((w) => w.stuck === true) ? STUCK_NOTE : "";
  return (
    table(
      WORKER_COLUMNS,
      workers.map((w) => [
        w.worker_id,
        w.stuck === true ? "stuck" : w.status,
        shortDuration(Math.max(0, now - Date.parse(w.last_seen_at))),
        String(w.running_tasks),
        w.workflows.map((f) => `${f.name}@${f.version}`).join(", ") || "-",
      ]),
    ) + note
  );
}

const STUCK_NOTE =
  "stuck: no free slot, yet it holds no task: code of runs that has not returned (a cancel it ignored, a lease it lost) keeps its slots, so it takes no work; its log names the runs, and a restart frees them\n";

export function registerOutcomeCommands(program: Command, io: CliIO): void {
  addWriteOptions(
    addConnectionOptions(program.command("start"))
      .description("start an execution of a workflow now, without a schedule")
      .argument("<workflow>", "the workflow name, or name@version (the same as --version)")
      .option("--version <version>", "the version to run (default: the latest that is not deprecated)")
      .option(
        "--input <json>",
        "the input, a JSON object, @file or @- for the standard input (default {})",
        parseJsonObjectArg,
      )
      .option("--id <execution-id>", "the execution id (starting an existing id returns it); default a UUID")
      .option("--json", "print the server's JSON"),
    false,
  ).action(
    async (
      workflow: string,
      opts: { version?: string; input?: Record<string, never>; id?: string; json?: boolean } & WriteFlags,
      cmd: Command,
    ) => {
      // `Greeter@1.0.0` is Greeter pinned to 1.0.0, as `Greeter --version 1.0.0`.
      const pinned = pinnedWorkflow(cmd, "<workflow>", workflow, opts.version);
      const { created, value } = await clientFor(cmd, io).startExecution(
        {
          workflow: pinned.workflow,
          input: opts.input ?? {},
          ...(pinned.version !== undefined ? { version: pinned.version } : {}),
          ...(opts.id !== undefined ? { execution_id: opts.id } : {}),
        },
        writeOptionsOf(opts),
      );
      if (opts.json === true) return printJson(io, value);
      checked(value, "the execution", EXECUTION_FIELDS);
      const what = created ? "started execution" : "execution exists:";
      await io.stdout.write(`${oneLine(`${what} ${value.execution_id}  ${value.workflow}@${value.version}`)}\n`);
    },
  );

  addWriteOptions(
    addConnectionOptions(program.command("retry"))
      .description("re-run a FAILED or CANCELLED execution as its next run (same id, history kept)")
      .argument("<execution-id>")
      .option("--json", "print the server's JSON"),
    false,
  ).action(async (id: string, opts: { json?: boolean } & WriteFlags, cmd: Command) => {
    const e = await clientFor(cmd, io).retryExecution(id, writeOptionsOf(opts));
    if (opts.json === true) return printJson(io, e);
    checked(e, "the execution", EXECUTION_FIELDS);
    await io.stdout.write(`${oneLine(`retrying ${e.execution_id} as run ${e.run ?? "?"}`)}\n`);
  });

  addConnectionOptions(program.command("events"))
    .description("print an execution's history, oldest first")
    .argument("<execution-id>")
    .option("--json", 'print the server\'s JSON ({"events":[…]})')
    .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
      const events = await clientFor(cmd, io).executionEvents(id);
      if (opts.json === true) return printJson(io, { events });
      for (const e of events) checked(e, "an event of the history", EVENT_FIELDS);
      await io.stdout.write(eventTable(events));
    });

  addConnectionOptions(program.command("workers"))
    .description("list the workers seen in the last hour: workflows they run, last poll, running tasks")
    .option("--json", 'print the server\'s JSON ({"workers":[…]})')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const client = clientFor(cmd, io);
      const workers = await client.listWorkers();
      if (opts.json === true) return printJson(io, { workers });
      for (const w of workers) checked(w, "a worker of the list", WORKER_FIELDS);
      await io.stdout.write(workerTable(workers, io.now()));
      // The server lists the workers of workflows the caller may read (docs/security.md).
      if (workers.length === 0) await sayHiddenList(cmd, io, client, { what: "workers", action: "read" });
    });
}
