/**
 * bench:e2e child: graphile-worker with S crontab items (`* * * * *`, no backfill) in its own
 * schema; its runner both enqueues the cron jobs and works them. The nominal instant is the
 * payload's `_cron.ts`.
 */
import { Logger, parseCronItems, run } from "graphile-worker";
import { onStop, send, settings, started } from "./e2e-child.js";

const s = settings();
const t0 = performance.now();
const items = parseCronItems(
  Array.from({ length: s.schedules }, (_, i) => ({
    task: "noop",
    match: "* * * * *",
    identifier: `s${i}`,
    options: { backfillPeriod: 0 },
    payload: { key: `s${i}` },
  })),
);
const runner = await run({
  connectionString: s.target,
  schema: s.schema ?? "graphile_worker",
  noHandleSignals: true,
  ...(s.concurrency !== null ? { concurrency: s.concurrency } : {}),
  parsedCronItems: items,
  taskList: {
    noop: async (payload) => {
      const p = payload as { key: string; _cron?: { ts: string } };
      started(p.key, p._cron ? Date.parse(p._cron.ts) : Number.NaN);
    },
  },
  // Quiet: its per-job info lines would cost the measured process more than the no-op job.
  logger: new Logger(() => (level, message) => {
    if (level === "error") console.error(message);
  }),
});
const createMs = performance.now() - t0;
send({ type: "ready", createMs });
onStop(() => runner.stop());
