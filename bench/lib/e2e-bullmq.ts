/**
 * bench:e2e child: BullMQ with S job schedulers (`upsertJobScheduler`, pattern `* * * * *` or the run's --cron) and one
 * Worker in this process. The nominal instant is the scheduler's `prevMillis` (the job id ends with it).
 */
import { Queue, Worker } from "bullmq";
import { onStop, send, settings, started } from "./e2e-child.js";

const s = settings();
const url = new URL(s.target);
const connection = { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };
const name = `e2e-${process.pid}`;
const queue = new Queue(name, { connection });
const t0 = performance.now();
const ids = Array.from({ length: s.schedules }, (_, i) => `s${i}`);
for (let i = 0; i < ids.length; i += 500) {
  await Promise.all(
    ids
      .slice(i, i + 500)
      .map((id) =>
        queue.upsertJobScheduler(
          id,
          { pattern: s.cron ?? "* * * * *" },
          { name: "noop", opts: { removeOnComplete: true, removeOnFail: true } },
        ),
      ),
  );
}
const createMs = performance.now() - t0;
const worker = new Worker(
  name,
  async (job) => {
    started(job.repeatJobKey ?? job.id ?? "?", Number(job.opts.prevMillis ?? job.id?.split(":").pop()));
  },
  { connection, ...(s.concurrency !== null ? { concurrency: s.concurrency } : {}) },
);
await worker.waitUntilReady();
send({ type: "ready", createMs });
onStop(async () => {
  await worker.close(true);
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
});
