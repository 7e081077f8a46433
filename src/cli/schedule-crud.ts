/**
 * `orbit schedule create|get|list|update|delete|occurrences`: the schedule itself and its ledger.
 */
import { type Command, Option } from "commander";
import { CursorTrail, type OrbitClient } from "../client/client.js";
import type {
  ExecutionPage,
  OccurrenceJson,
  ScheduleCreateBody,
  ScheduleJson,
  ScheduleSettingsBody,
} from "../client/types.js";
import {
  checked,
  OCCURRENCE_FIELDS,
  SCHEDULE_BLOCK_FIELDS,
  SCHEDULE_FIELDS,
  WORKER_FIELDS,
  WORKFLOW_FIELDS,
} from "./answer-shape.js";
import {
  addWriteOptions,
  givenFilters,
  oneOf,
  printJson,
  usageError,
  type WriteFlags,
  wholeNumber,
  writeOptionsOf,
} from "./args.js";
import { clientFor } from "./connection.js";
import { sayHiddenList } from "./hidden-lists.js";
import type { CliIO } from "./io.js";
import { oneLine } from "./safe-text.js";
import { addSettingsFlags, type SettingsFlags, setAndUnset, settingsBody } from "./schedule-flags.js";
import {
  lastRunPending,
  latestVersions,
  noWorkerCandidates,
  occurrenceTable,
  polledWorkflows,
  registeredVersions,
  scheduleBlock,
  scheduleTable,
} from "./schedule-format.js";
import { pinnedWorkflow } from "./workflow-ref.js";

/** What `--state` may name (a schedule's `state`). */
const SCHEDULE_STATES = ["active", "paused", "ended"] as const;

interface JsonFlag {
  json?: boolean;
}

const SEED_CREATE = `orbit schedule create nightly-orders --workflow OrderProcessing --cron "0 2 * * *" \\
      --timezone Europe/Berlin \\
      --input '{"order_id": "N-1", "customer_id": "cust-1", "amount": 120.0, "items": [{"sku": "BOOK-1", "quantity": 1}]}' \\
      --description "Nightly reconciliation order"`;

/** The body with `--workflow Name@1.0.0` sent as `workflow: Name, version: 1.0.0` (workflow-ref.ts). */
function withPinnedVersion(cmd: Command, body: ScheduleSettingsBody): ScheduleSettingsBody {
  if (typeof body.workflow !== "string") return body;
  const version = body.version as string | null | undefined;
  const pinned = pinnedWorkflow(cmd, "--workflow", body.workflow, version);
  const out: ScheduleSettingsBody = { ...body, workflow: pinned.workflow };
  if (pinned.version !== undefined) out.version = pinned.version;
  return out;
}

export function addCrudCommands(schedule: Command, io: CliIO): void {
  const create = schedule
    .command("create")
    .description("create a schedule and print it")
    .argument("<schedule-id>", "the schedule's id: letters, digits, - _ and ., at most 100 characters");
  addWriteOptions(addSettingsFlags(create, "create"), false)
    .option("--json", "print the server's JSON")
    .addHelpText(
      "after",
      `
Examples:
  $ ${SEED_CREATE}
  $ orbit schedule create orders-every-10s --workflow OrderProcessing --interval 10s --input @order.json`,
    )
    .action(async (id: string, opts: SettingsFlags & WriteFlags & JsonFlag, cmd: Command) => {
      if (opts.cron === undefined && opts.interval === undefined) {
        usageError(cmd, "give --cron <expression> or --interval <duration>");
      }
      const created = await clientFor(cmd, io).createSchedule(
        // Built from the setting table's flags (--workflow required); the server checks the values.
        { schedule_id: id, ...withPinnedVersion(cmd, settingsBody(opts)) } as ScheduleCreateBody,
        writeOptionsOf(opts),
      );
      if (opts.json === true) await printJson(io, created);
      else await io.stdout.write(scheduleBlock(checked(created, "the schedule", SCHEDULE_BLOCK_FIELDS)));
      // Created with no occurrence to come (an end_at in the past): allowed, to backfill a past
      // span, but said, since a newcomer's typo in the year looks like any other schedule.
      if (created.state === "ended") {
        // An end_at to come with nothing before it (a start_at after its times, its only time in a
        // DST gap): backfill, which starts past occurrences, is no help then.
        const endPast = typeof created.end_at === "string" && Date.parse(created.end_at) <= Date.now();
        const startLater = typeof created.start_at === "string" && Date.parse(created.start_at) > Date.now();
        const then = endPast ? "; `orbit schedule backfill` starts past occurrences" : "";
        await io.stderr.write(
          `orbit: note: ${oneLine(id)} has no occurrence between ${startLater ? "its start_at" : "now"} and its end_at, so it is ended and never fires${then}\n`,
        );
      }
    });

  schedule
    .command("get")
    .description("print a schedule: its settings, counters, last fire and next fires")
    .argument("<schedule-id>")
    .option("--json", "print the server's JSON")
    .action(async (id: string, opts: JsonFlag, cmd: Command) => {
      const client = clientFor(cmd, io);
      const s = await client.getSchedule(id);
      if (opts.json === true) return printJson(io, s);
      checked(s, "the schedule", SCHEDULE_BLOCK_FIELDS);
      // A last run that has not ended may be waiting (for a worker, a free slot): say why.
      const lastRun = lastRunPending(s)
        ? await client.getExecution(s.last_execution_id as string).catch(() => undefined)
        : undefined;
      const shown = lastRun && { status: lastRun.status, run: lastRun.run, waiting: lastRun.waiting?.message };
      await io.stdout.write(scheduleBlock(s, shown));
    });

  schedule
    .command("list")
    .description("list schedules (every page, unless --limit)")
    .option("--workflow <name>", "only schedules of this workflow")
    .option("--state <state>", "only schedules in this state: active, paused or ended", oneOf(SCHEDULE_STATES))
    .option("--limit <n>", "list at most n schedules (one page)", wholeNumber(1, 1000))
    // As `orbit ps --all` takes it: here every schedule is listed already, so it only says so.
    .addOption(new Option("--all", "list every schedule (the default; follows the server's pages)").conflicts("limit"))
    .option(
      "--wide",
      "add an OUTCOME column after STATE: the last ended run (COMPLETED, FAILED x3, …), START FAILED, NO WORKER",
    )
    .option("--json", 'print the server\'s JSON ({"schedules":[…],"next_cursor":…})')
    .action(
      async (opts: { workflow?: string; state?: string; limit?: number; wide?: boolean } & JsonFlag, cmd: Command) => {
        const client = clientFor(cmd, io);
        // `Name@1.0.0`, as the list prints a pinned schedule's workflow: the schedules of Name pinned
        // to that version (sent whole, it matched nothing and said nothing).
        const ref =
          opts.workflow === undefined ? undefined : pinnedWorkflow(cmd, "--workflow", opts.workflow, undefined);
        const query = { workflow: ref?.workflow, state: opts.state };
        const listed =
          opts.limit === undefined
            ? { schedules: await client.listAllSchedules(query), next_cursor: null }
            : await client.listSchedules({ ...query, limit: opts.limit });
        const pin = ref?.version;
        const page =
          pin === undefined ? listed : { ...listed, schedules: listed.schedules.filter((s) => s.version === pin) };
        if (opts.json === true) return printJson(io, page);
        for (const s of page.schedules) checked(s, "a schedule of the list", SCHEDULE_FIELDS);
        const wide = opts.wide === true;
        // NO WORKER, with or without --wide: the default list said nothing of a schedule whose run
        // waits for a worker that never comes (a tester). Read only when a row may say it; a caller
        // who may not list the workers still gets the list, without NO WORKER.
        const [workers, workflows] = page.schedules.some(lastRunPending)
          ? await Promise.all([
              // An answer of another shape is as unknown as a refused one (checked throws).
              client
                .listWorkers()
                .then((rows) => rows.map((w) => checked(w, "a worker", WORKER_FIELDS)))
                .catch(() => null),
              client
                .listWorkflows()
                .then((rows) => rows.map((w) => checked(w, "a workflow", WORKFLOW_FIELDS)))
                .catch(() => null),
            ])
          : [null, null];
        const polled = workers === null ? null : polledWorkflows(workers);
        const latest = workflows === null ? null : latestVersions(workflows);
        const versions = workflows === null ? null : registeredVersions(workflows);
        const waits =
          polled === null
            ? undefined
            : await runningLast(client, noWorkerCandidates(page.schedules, polled, latest, versions));
        await io.stdout.write(scheduleTable(page.schedules, { wide, polled, latest, ...(waits ? { waits } : {}) }));
        // A filter that matches nothing (a workflow name in another case) printed the header alone,
        // as an empty server does: say which filter it was, as orbit ps does.
        const given = givenFilters([
          ["--workflow", opts.workflow],
          ["--state", opts.state],
        ]);
        // None at all for an identity that may schedule nothing: said so, as the web UI says it.
        const hidden =
          page.schedules.length === 0 &&
          (await sayHiddenList(cmd, io, client, { what: "schedules", action: "schedule" }));
        if (page.schedules.length === 0 && given !== "" && !hidden) {
          io.stderr.print(`no schedule matches ${oneLine(given)}\n`);
        }
        // Cut at --limit: said on stderr as `orbit ps` says it, or the first page read as all there are.
        if (page.next_cursor !== null) {
          io.stderr.print(`(the first ${page.schedules.length} shown; more with a larger --limit, or without it)\n`);
        }
      },
    );

  const update = schedule
    .command("update")
    .description("change settings of a schedule (only the flags given); the next occurrence is recomputed from now")
    .argument("<schedule-id>");
  addWriteOptions(addSettingsFlags(update, "update"))
    .option("--json", "print the server's JSON")
    .addHelpText(
      "after",
      `
Examples:
  $ orbit schedule update nightly-orders --cron "30 2 * * *" --description "Half past two"
  $ orbit schedule update nightly-orders --unset jitter --if-match 7`,
    )
    .action(async (id: string, opts: SettingsFlags & WriteFlags & JsonFlag, cmd: Command) => {
      const contradiction = setAndUnset(opts) ?? pausedBothWays(cmd);
      if (contradiction !== null) usageError(cmd, `${contradiction} contradict each other: give one of them`);
      const patch = withPinnedVersion(cmd, settingsBody(opts));
      if (Object.keys(patch).length === 0) usageError(cmd, "nothing to change: give at least one setting flag");
      const s = await clientFor(cmd, io).updateSchedule(id, patch, writeOptionsOf(opts));
      if (opts.json === true) return printJson(io, s);
      await io.stdout.write(scheduleBlock(checked(s, "the schedule", SCHEDULE_BLOCK_FIELDS)));
    });

  addWriteOptions(
    schedule
      .command("delete")
      .description("delete a schedule (the executions it started are kept)")
      .argument("<schedule-id>"),
  ).action(async (id: string, opts: WriteFlags, cmd: Command) => {
    await clientFor(cmd, io).deleteSchedule(id, writeOptionsOf(opts));
    await io.stdout.write(`deleted ${id}\n`);
  });

  schedule
    .command("occurrences")
    .description("print the schedule's ledger, newest first: started, skipped, buffered and dead-letter rows")
    .argument("<schedule-id>")
    .option("--limit <n>", "print at most n rows (default: every row the server keeps)", wholeNumber(1, 1000))
    .option("--json", 'print the server\'s JSON ({"occurrences":[…],"next_cursor":…})')
    .action(async (id: string, opts: { limit?: number } & JsonFlag, cmd: Command) => {
      const client = clientFor(cmd, io);
      const rows: OccurrenceJson[] = [];
      const trail = new CursorTrail();
      let cursor: string | undefined;
      do {
        const want = opts.limit === undefined ? 1000 : opts.limit - rows.length;
        const page = await client.listOccurrences(id, { cursor, limit: want });
        rows.push(...page.occurrences);
        cursor = trail.next(page.next_cursor, page.occurrences.length);
      } while (cursor !== undefined && (opts.limit === undefined || rows.length < opts.limit));
      const out = { occurrences: rows, next_cursor: cursor ?? null };
      if (opts.json === true) return printJson(io, out);
      for (const o of rows) checked(o, "a row of the ledger", OCCURRENCE_FIELDS);
      await io.stdout.write(occurrenceTable(rows));
      // Cut at --limit: said on stderr as `orbit ps` says it, or the newest rows read as all there are.
      if (cursor !== undefined) {
        io.stderr.print(`(the newest ${rows.length} shown; more with a larger --limit, or without it)\n`);
      }
    });
}

/**
 * `--paused` and `--no-paused` both given: commander keeps the last one, so `--no-paused --paused`
 * paused and the other order resumed, exit 0 (a tester's report). Read from the command line as typed.
 */
function pausedBothWays(cmd: Command): string | null {
  let root = cmd;
  while (root.parent !== null) root = root.parent;
  const given = root.args.length > 0 ? (root as unknown as { rawArgs: string[] }).rawArgs : [];
  const options = given.slice(0, given.includes("--") ? given.indexOf("--") : undefined);
  return options.includes("--paused") && options.includes("--no-paused") ? "--paused and --no-paused" : null;
}

/**
 * The schedules among `candidates` whose last execution is still RUNNING, with the version it runs
 * on: it waits when no live worker polls that version of its workflow. The last execution can have ended though the last outcome names
 * another (an earlier run that ended after it: `allow`, `cancel_previous`, a backfill), and the
 * list said NO WORKER for schedules whose runs had all ended, hiding their failures (a tester).
 * Few candidates: each execution is read; many: the RUNNING executions are listed once.
 */
async function runningLast(client: OrbitClient, candidates: readonly ScheduleJson[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (candidates.length <= 100) {
    for (let i = 0; i < candidates.length; i += 16) {
      await Promise.all(
        candidates.slice(i, i + 16).map(async (s) => {
          const e = await client.getExecution(s.last_execution_id as string).catch(() => null);
          if (e?.status === "RUNNING") out.set(s.schedule_id, e.version);
        }),
      );
    }
    return out;
  }
  const running = new Map<string, string>();
  const trail = new CursorTrail();
  let cursor: string | undefined;
  do {
    const page: ExecutionPage = await client.listExecutions({
      status: "RUNNING",
      limit: 1000,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    for (const e of page.executions) running.set(e.execution_id, e.version);
    cursor = trail.next(page.next_cursor, page.executions.length);
  } while (cursor !== undefined);
  for (const s of candidates) {
    const version = running.get(s.last_execution_id as string);
    if (version !== undefined) out.set(s.schedule_id, version);
  }
  return out;
}
