/** `orbit ps`, `orbit status <execution-id>` and `orbit cancel <execution-id>`. */
import { type Command, Option } from "commander";
import { CursorTrail } from "../client/client.js";
import type { ExecutionJson, ExecutionSummaryJson } from "../client/types.js";
import { OrbitError } from "../domain/errors.js";
import { EXECUTION_STATUSES } from "../domain/execution.js";
import { checked, EXECUTION_FIELDS } from "./answer-shape.js";
import {
  addWriteOptions,
  givenFilters,
  nonEmpty,
  oneOf,
  printJson,
  type WriteFlags,
  wholeNumber,
  writeOptionsOf,
} from "./args.js";
import { addConnectionOptions, clientFor } from "./connection.js";
import { executionTable, retriedAt, statusBlock } from "./execution-format.js";
import { sayHiddenList } from "./hidden-lists.js";
import type { CliIO } from "./io.js";
import { oneLine } from "./safe-text.js";

/** Executions `orbit ps` lists without `--limit` or `--all` (the server's default page). */
export const DEFAULT_PS_LIMIT = 50;

interface PsFlags {
  workflow?: string;
  status?: string;
  schedule?: string;
  limit?: number;
  all?: boolean;
  json?: boolean;
}

export function registerExecutionCommands(program: Command, io: CliIO): void {
  addConnectionOptions(program.command("ps"))
    .description("list executions, newest first")
    .option("--workflow <name>", "only executions of this workflow", nonEmpty)
    .option(
      "--status <status>",
      `only executions in this status: ${EXECUTION_STATUSES.join(", ")} (any case)`,
      oneOf(EXECUTION_STATUSES),
    )
    .option("--schedule <schedule-id>", "only executions this schedule started", nonEmpty)
    .option("--limit <n>", `list at most n executions (default: ${DEFAULT_PS_LIMIT})`, wholeNumber(1, 1_000_000))
    // `--limit N | --all` (docs/cli.md): with both, --all silently listed everything.
    .addOption(new Option("--all", "list every execution (follows the server's pages)").conflicts("limit"))
    .option("--json", 'print the server\'s JSON ({"executions":[…],"next_cursor":…})')
    .addHelpText(
      "after",
      `
AGE is the time since the execution was created: 259ms, 10.3s, 5m12s, 3h04m, 2d05h.

Example:
  $ orbit ps --workflow OrderProcessing
  EXECUTION                              WORKFLOW                 VERSION    STATUS        AGE
  orders-every-10s:2026-11-15T18:51:30Z  OrderProcessing          1.0.0      COMPLETED     259ms`,
    )
    .action(async (opts: PsFlags, cmd: Command) => {
      const client = clientFor(cmd, io);
      const want = opts.all === true ? Number.POSITIVE_INFINITY : (opts.limit ?? DEFAULT_PS_LIMIT);
      const rows: (ExecutionJson | ExecutionSummaryJson)[] = [];
      const trail = new CursorTrail();
      // The table shows no input or result, so it reads the summaries (a page of 50 executions with
      // 900 KB results was a 43 MB answer); --json prints the executions whole, as it always has.
      let summaries = opts.json !== true;
      let cursor: string | undefined;
      do {
        const query = {
          workflow: opts.workflow,
          status: opts.status,
          schedule_id: opts.schedule,
          cursor,
          limit: Math.min(1000, want - rows.length),
        };
        const page = summaries
          ? await client.listExecutionSummaries(query).catch((err: unknown) => {
              // A server before the summary view refuses the parameter: list in full from it.
              if (!refusedView(err)) throw err;
              summaries = false;
              return client.listExecutions(query);
            })
          : await client.listExecutions(query);
        rows.push(...page.executions);
        cursor = trail.next(page.next_cursor, page.executions.length);
      } while (cursor !== undefined && rows.length < want);
      if (opts.json === true) return printJson(io, { executions: rows, next_cursor: cursor ?? null });
      for (const e of rows) checked(e, "an execution of the list", EXECUTION_FIELDS);
      await io.stdout.write(executionTable(rows, io.now()));
      // A filter that matches nothing (a mistyped schedule id, a workflow name in another case)
      // printed the header alone, as an empty server does: say which filter it was.
      const given = filterText(opts);
      // None at all for an identity that may read nothing: said so, as the web UI says it of schedules.
      const hidden =
        rows.length === 0 && (await sayHiddenList(cmd, io, client, { what: "executions", action: "read" }));
      if (rows.length === 0 && given !== "" && !hidden) io.stderr.print(`no execution matches ${oneLine(given)}\n`);
      // Cut at the limit: said on stderr (the table on stdout stays the table), or the newest 50
      // read as all there are.
      if (cursor !== undefined) {
        io.stderr.print(`(the newest ${rows.length} shown; more with --limit N or --all)\n`);
      }
    });

  addConnectionOptions(program.command("status"))
    .description("print an execution: status, workflow version, schedule, elapsed time")
    .argument("<execution-id>")
    .option("--wide", "also print a completed execution's result")
    .option("--json", "print the server's JSON")
    .action(async (id: string, opts: { json?: boolean; wide?: boolean }, cmd: Command) => {
      const client = clientFor(cmd, io);
      const e = await client.getExecution(id);
      if (opts.json === true) return printJson(io, e);
      checked(e, "the execution", EXECUTION_FIELDS);
      // The execution's started_at is run 1's: a retried run's elapsed counts from its retry.
      const runStartedAt = e.run > 1 ? retriedAt(await client.executionEvents(id)) : null;
      await io.stdout.write(statusBlock(e, io.now(), opts.wide === true, runStartedAt));
    });

  addWriteOptions(
    addConnectionOptions(program.command("cancel"))
      .description("cancel an execution: its worker runs the compensations, then it ends CANCELLED")
      .argument("<execution-id>")
      .option("--reason <text>", "why (stored on the execution; default: cancelled)")
      .option("--json", "print the server's JSON"),
    false,
  ).action(async (id: string, opts: { reason?: string; json?: boolean } & WriteFlags, cmd: Command) => {
    const body = opts.reason === undefined ? {} : { reason: opts.reason };
    const client = clientFor(cmd, io);
    // The server answers a cancel already requested as it answers the first (the execution, with
    // the first reason): only the execution before tells them apart. An identity that may cancel
    // but not read gets the answer without it.
    const before = opts.json === true ? null : await client.getExecution(id).catch(() => null);
    const e = await client.cancelExecution(id, body, writeOptionsOf(opts));
    if (opts.json === true) return printJson(io, e);
    const text = cancelText(id, checked(e, "the execution", EXECUTION_FIELDS), opts.reason, before);
    await io.stdout.write(`${oneLine(text)}\n`);
  });
}

/** The server refused `view=summary` as a parameter it does not know (a release before it). */
function refusedView(err: unknown): boolean {
  return err instanceof OrbitError && err.code === "INVALID_ARGUMENT" && /\bview\b/.test(err.message);
}

/** The filters `orbit ps` was given, as typed: `--workflow Nope --status RUNNING`; "" for none. */
function filterText(opts: PsFlags): string {
  return givenFilters([
    ["--workflow", opts.workflow],
    ["--status", opts.status],
    ["--schedule", opts.schedule],
  ]);
}

/** What `orbit cancel` says of the execution the server answered with (`before`: as it was, if read). */
function cancelText(id: string, e: ExecutionJson, reason: string | undefined, before: ExecutionJson | null): string {
  if (e.status === "RUNNING" || e.status === "COMPENSATING") {
    // Asked before: the server kept the first reason and this request changed nothing.
    if (before?.cancel_reason !== undefined && (before.status === "RUNNING" || before.status === "COMPENSATING")) {
      return `cancel already requested for ${id} (cancel reason: ${before.cancel_reason}; ${e.status}: its worker runs the compensations)`;
    }
    return `cancel requested for ${id} (${e.status}: its worker runs the compensations)`;
  }
  if (e.status !== "CANCELLED") return `not cancelled: ${id} already ended ${e.status}`;
  // Cancelling is idempotent: one cancelled before for another reason keeps that reason, and
  // "cancelled" would hide that this request changed nothing.
  if (e.cancel_reason !== (reason ?? "cancelled")) {
    return `not cancelled: ${id} already ended CANCELLED (cancel reason: ${e.cancel_reason ?? "-"})`;
  }
  return `cancelled ${id}`;
}
