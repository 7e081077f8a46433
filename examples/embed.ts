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
await client.registerWorkflow({ name: Report.name, version: Report.version });
// Declared in code, applied at every start: the schedule is created once and updated if it differs.
const schedule = { schedule_id: "daily-report", workflow: "DailyReport", cron: "0 7 * * *", timezone: "Europe/Berlin" };
await client.createSchedule({ ...schedule, input: { team: "ops" } }).catch(async () => {
  await client.updateSchedule(schedule.schedule_id, { cron: schedule.cron, timezone: schedule.timezone });
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
