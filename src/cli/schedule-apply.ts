/**
 * `orbit schedule apply -f FILE [--owner NAME] [--selector k=v] [--prune] [--allow-unregistered]
 * [--dry-run] [--json]` (or the FILE alone): make the server's schedules match a file (docs/cli.md). The
 * server validates and writes the whole file in one transaction (POST /v1/schedules/apply): it
 * creates the missing schedules, updates the settings that differ (a setting the file leaves out
 * goes back to its default, but the timing, the pause and the labels),
 * leaves equal ones alone and, with --prune, deletes the schedules of this apply set (--owner /
 * --selector) that the file does not name.
 */
import type { Command } from "commander";
import { OrbitError } from "../domain/errors.js";
import { FileNotUtf8, FileTooLarge, readCapped } from "../domain/read-capped.js";
import { APPLY_FIELDS, APPLY_STEP_FIELDS, checked, WORKFLOW_FIELDS } from "./answer-shape.js";
import { applyScope, parseApplyFile, stepLine, summaryLine, workflowLine } from "./apply-plan.js";
import { printJson, repeatable, usageError } from "./args.js";
import { clientFor } from "./connection.js";
import type { CliIO } from "./io.js";

/** The largest schedules file read: YAML says in 64 MB what the server's 16 MB of JSON holds, and more. */
const MAX_APPLY_FILE_BYTES = 64 * 1024 * 1024;

interface ApplyFlags {
  file?: string[];
  owner?: string[];
  selector?: string[];
  prune?: boolean;
  dryRun?: boolean;
  allowUnregistered?: boolean;
  json?: boolean;
}

/** Every value of a repeatable option, to refuse a second one instead of keeping only the last. */
const collect = repeatable((value: string, previous: string[] = []): string[] => [...previous, value]);

export function addApplyCommand(schedule: Command, io: CliIO): void {
  schedule
    .command("apply")
    .description("make the server's schedules match a YAML or JSON file (declarative schedules)")
    .argument("[file]", "the file, as -f gives it")
    .option(
      "-f, --file <file>",
      "YAML or JSON in UTF-8: a list of schedules, or {schedules: [...]}; - for the standard input",
      collect,
    )
    .option(
      "--owner <name>",
      "this apply set's name: stamped as the label orbit/owner=<name> on every schedule written (default: default)",
      collect,
    )
    .option(
      "--selector <key=value>",
      "labels of this apply set (repeatable, or k=v,k=v): stamped on every schedule written",
      collect,
    )
    .option("--prune", "delete this apply set's schedules that the file does not name")
    .option(
      "--allow-unregistered",
      "accept schedules whose workflow is not registered (and not declared with kind: workflow); they wait for it",
    )
    .option("--dry-run", "check and plan the whole file on the server, print what would change; change nothing")
    .option("--json", 'print the server\'s JSON ({"dry_run":…,"steps":[…],"created":N,"updated":N,…})')
    .addHelpText(
      "after",
      `
Each schedule in the file has the API's settings (schedule_id, workflow, cron or interval, …).
Each schedule ends as the file says: a setting left out goes back to its default (unset), except
the pause (orbit schedule pause/resume own it) and the labels (the apply set stamps them).
An entry with kind: workflow (name, version, input_schema) registers that workflow version first,
so the file's schedules may name it before any worker has run.
The whole file is applied in one transaction: one refused entry changes nothing.
Without --owner or --selector the set is orbit/owner=default. --prune deletes only schedules
that carry every label of the set: a schedule made by hand is never pruned unless a file adopted it.

Example schedules.yaml:
  schedules:
    - schedule_id: nightly-orders
      workflow: OrderProcessing
      cron: "0 2 * * *"
      timezone: Europe/Berlin
      input: {order_id: N-1, customer_id: cust-1, amount: 120.0, items: [{sku: BOOK-1, quantity: 1}]}

  $ orbit schedule apply -f schedules.yaml --owner billing --prune --dry-run
  would create nightly-orders
  dry run, nothing changed: 1 created, 0 updated, 0 unchanged, 0 deleted`,
    )
    .action(async (fileArgument: string | undefined, opts: ApplyFlags, cmd: Command) => {
      // Each given once: a second -f (or --owner) took the place of the first, so with --prune the
      // first file's schedules were deleted as "not named" (docs/cli.md § schedule apply).
      const files = [...new Set([...(fileArgument !== undefined ? [fileArgument] : []), ...(opts.file ?? [])])];
      if (files.length > 1) {
        usageError(cmd, `two files given (${files.slice(0, 2).join(" and ")}); apply one file at a time`);
      }
      const owners = [...new Set(opts.owner ?? [])];
      if (owners.length > 1) {
        usageError(cmd, `two owners given (${owners.slice(0, 2).join(" and ")}); an apply set has one owner`);
      }
      const path = files[0];
      if (path === undefined) usageError(cmd, "give the file to apply: orbit schedule apply -f FILE");
      // A malformed --selector is bad usage (exit 2), as a malformed flag is (docs/cli.md).
      let scope: Record<string, string>;
      try {
        scope = applyScope(owners[0], opts.selector ?? []);
      } catch (err) {
        if (err instanceof OrbitError) usageError(cmd, err.message);
        throw err;
      }
      let text: string;
      try {
        // `-f -` is the standard input (kubectl's way); it was read as a file named `-`.
        text = readCapped(path, MAX_APPLY_FILE_BYTES, { dashIsStdin: true });
      } catch (err) {
        // Not UTF-8 is bad usage, as the file unread is: its Latin-1 `é` was stored as U+FFFD.
        if (err instanceof FileNotUtf8) usageError(cmd, err.message);
        if (err instanceof FileTooLarge) {
          throw new OrbitError(
            "INVALID_ARGUMENT",
            `${err.message}; split its schedules over several files (the server takes at most 16 MB of them as JSON in one apply)`,
          );
        }
        // A file the command line names that cannot be read is bad usage (exit 2), as `--input @FILE`'s
        // is: nothing was sent. A file that reads but does not parse is the request refused (exit 1).
        const code = (err as NodeJS.ErrnoException).code ?? String(err);
        usageError(cmd, `cannot read ${path}: ${code}`);
      }
      const file = parseApplyFile(text, path);
      // With --prune, a file of workflows alone would delete the set's every schedule as "not named".
      if (opts.prune === true && !file.listsSchedules) {
        throw new OrbitError(
          "INVALID_ARGUMENT",
          `${path}: declares no schedules, only workflows, and with --prune that deletes every schedule of the apply set; if that is meant, say so with \`schedules: []\` ({schedules: [], workflows: [...]}), else leave out --prune`,
        );
      }
      const result = await clientFor(cmd, io).applySchedules({
        schedules: file.schedules,
        ...(file.workflows.length > 0 ? { workflows: file.workflows } : {}),
        ...(opts.allowUnregistered === true ? { allow_unregistered: true } : {}),
        ...(Object.keys(scope).length > 0 ? { scope } : {}),
        ...(opts.prune === true ? { prune: true } : {}),
        ...(opts.dryRun === true ? { dry_run: true } : {}),
      });
      if (opts.json === true) return printJson(io, result);
      // Checked whole before the first line is printed: a plan cut short by a line it cannot read misleads.
      checked(result, "the apply's result", APPLY_FIELDS);
      const workflows = checked({ workflows: result.workflows ?? [] }, "the apply's result", { workflows: "list" });
      for (const w of workflows.workflows) checked(w, "a workflow of the apply", WORKFLOW_FIELDS);
      for (const step of result.steps) checked(step, "a step of the apply", APPLY_STEP_FIELDS);
      for (const w of workflows.workflows) await io.stdout.write(workflowLine(w, result.dry_run));
      for (const step of result.steps) await io.stdout.write(stepLine(step, result.dry_run));
      await io.stdout.write(summaryLine(result));
    });
}
