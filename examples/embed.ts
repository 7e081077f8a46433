/**
 * Library mode (docs/operations.md § Embed): an application that runs the Orbit server, a worker
 * and its schedules in its own process, with no separate `orbit server`. Run it with
 * `npm run build && node examples/dist/embed.js`; in an application, install `orbit-scheduler` and
 * keep the imports as they are.
 */
import { defineWorkflow, OrbitClient, Worker } from "orbit-scheduler";
import { startServer } from "orbit-scheduler/server";

const Report = defineWorkflow<{ team: string }>({
  name: "DailyReport",
  version: "1.0.0",
  async run(ctx, input) {
    const rows = await ctx.step("query", async () => 42);
    return { team: input.team, rows };
  },
});

// Everything startServer takes is typed and documented (ServerOptions); these are the usual ones.
const server = await startServer({
  port: 0, // any free port; server.url says which
  dataDir: "./.orbit-embed", // SQLite file ./.orbit-embed/orbit.db; or database: "postgres://…"
  logger: "warn",
});
const client = new OrbitClient({ server: server.url });
// Declared in code, applied at every start, as `orbit schedule apply` applies a file (docs/api.md
// § Applying a schedules file): in one transaction the workflow is registered and the schedule
// created, or updated to match when any setting here differs (a setting left out goes back to its
// default). A refused setting, an invalid cron say, rejects with its reason and writes nothing.
await client.applySchedules({
  workflows: [{ name: Report.name, version: Report.version }],
  schedules: [
    {
      schedule_id: "daily-report",
      workflow: "DailyReport",
      cron: "0 7 * * *",
      timezone: "Europe/Berlin",
      input: { team: "ops" },
    },
  ],
});
const worker = new Worker({ server: server.url, workflows: [Report] });
const working = worker.run();
console.log(`Orbit embedded at ${server.url}; Ctrl-C stops the worker, then the server.`);

const stop = async (): Promise<void> => {
  await worker.close();
  await working;
  await server.close();
};
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
