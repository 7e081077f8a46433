/** bench:e2e child: an Orbit Worker running the no-op workflow, recording when each run begins. */
import { defineWorkflow, Worker } from "../../src/index.js";
import { onStop, send, settings, started } from "./e2e-child.js";

const s = settings();
const Noop = defineWorkflow({
  name: "Noop",
  version: "1.0.0",
  run: (ctx) => {
    const t = ctx.trigger;
    if (t) started(t.schedule_id, Date.parse(t.scheduled_for));
    return null;
  },
});
const quiet = { info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) };
const worker = new Worker({
  server: s.server ?? "",
  workflows: [Noop],
  logger: quiet,
  ...(s.concurrency !== null ? { concurrency: s.concurrency } : {}),
});
const working = worker.run();
send({ type: "ready" });
onStop(async () => {
  await worker.close();
  await working;
});
