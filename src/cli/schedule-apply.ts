/**
 * `orbit schedule apply -f FILE [--prune] [--dry-run]`: make the server's schedules match a file
 * (docs/cli.md). Creates the missing ones, PATCHes the settings that differ (only the settings the file
 * gives), leaves equal ones alone and, with --prune, deletes the schedules the file does not name.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { OrbitError } from "../domain/errors.js";
import { parseScheduleFile, planApply, stepLine, summaryLine } from "./apply-plan.js";
import { clientFor } from "./connection.js";
import type { CliIO } from "./io.js";

interface ApplyFlags {
  file: string;
  prune?: boolean;
  dryRun?: boolean;
}

export function addApplyCommand(schedule: Command, io: CliIO): void {
  schedule
    .command("apply")
    .description("make the server's schedules match a YAML or JSON file (declarative schedules)")
    .requiredOption("-f, --file <file>", "YAML or JSON: a list of schedules, or {schedules: [...]}")
    .option("--prune", "delete the server's schedules that the file does not name")
    .option("--dry-run", "check the whole file on the server and print what would change; change nothing")
    .addHelpText(
      "after",
      `
Each schedule in the file has the API's settings (schedule_id, workflow, cron or interval, …).
Only the settings the file gives are compared; a setting left out keeps the server's value.

Example schedules.yaml:
  schedules:
    - schedule_id: nightly-orders
      workflow: OrderProcessing
      cron: "0 2 * * *"
      timezone: Europe/Berlin
      input: {order_id: N-1, customer_id: cust-1, amount: 120.0, items: [{sku: BOOK-1, quantity: 1}]}

  $ orbit schedule apply -f schedules.yaml --dry-run
  would create nightly-orders
  dry run, nothing changed: 1 created, 0 updated, 0 unchanged, 0 deleted`,
    )
    .action(async (opts: ApplyFlags, cmd: Command) => {
      let text: string;
      try {
        text = await readFile(opts.file, "utf8");
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? String(err);
        throw new OrbitError("INVALID_ARGUMENT", `cannot read ${opts.file}: ${code}`);
      }
      const entries = parseScheduleFile(text, opts.file);
      const client = clientFor(cmd, io);
      const steps = planApply(entries, await client.listAllSchedules(), opts.prune === true);
      const dryRun = opts.dryRun === true;
      // The server checks the whole file first, as it would write it: a dry run refuses exactly
      // what the real run would, and a real run writes nothing when one entry is wrong.
      if (entries.length > 0) {
        await client.validateSchedules(entries);
      }
      if (!dryRun) {
        // Every create in one transaction (all or none), then the updates and deletions.
        const creates = steps.filter((s) => s.action === "create").map((s) => s.body);
        if (creates.length > 0) await client.createSchedules(creates);
        for (const step of steps) {
          if (step.action === "update") await client.updateSchedule(step.id, step.body);
          else if (step.action === "delete") await client.deleteSchedule(step.id);
        }
      }
      for (const step of steps) await io.stdout.write(stepLine(step, dryRun));
      await io.stdout.write(summaryLine(steps, dryRun));
    });
}
