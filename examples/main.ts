/**
 * `npm start`: an Orbit server on the embedded SQLite default (./.orbit, reused by later runs), a
 * worker running OrderProcessing, and the demo schedule `orders-every-10s`. Ctrl-C stops both.
 * It imports Orbit by its package name, as an application would: `npm run build` compiles it to
 * examples/dist/ and `npm start` runs that with plain Node (no TypeScript loader at run time).
 */
import { OrbitClient, OrbitError, Worker } from "orbit-scheduler";
import { StartupError, startServer } from "orbit-scheduler/server";
import { OrderProcessing } from "./order-processing.js";

const SCHEDULE = "orders-every-10s";
const INPUT = { order_id: "R-1", customer_id: "cust-1", amount: 120.0, items: [{ sku: "BOOK-1", quantity: 1 }] };

// A start-up failure (the port taken by an earlier `npm start`, a data folder that cannot be made)
// is one line naming the address or file, as `orbit server` prints it, not a stack trace.
const server = await startServer({ logger: process.env.ORBIT_LOG_LEVEL ?? "warn" }).catch((err: unknown) => {
  if (!(err instanceof StartupError)) throw err;
  console.error(`orbit: ${err.message}`);
  process.exit(1);
});
const client = new OrbitClient({ server: server.url });
await client.registerWorkflow({
  name: OrderProcessing.name,
  version: OrderProcessing.version,
  input_schema: OrderProcessing.input!,
  description: OrderProcessing.description!,
});
const quiet = process.env.ORBIT_LOG_LEVEL === undefined;
const worker = new Worker({
  server: server.url,
  workflows: [OrderProcessing],
  ...(quiet ? { logger: { info: () => undefined, warn: console.warn, error: console.error } } : {}),
});
const working = worker.run();

try {
  await client.getSchedule(SCHEDULE);
} catch (err) {
  if (!(err instanceof OrbitError && err.code === "NOT_FOUND")) throw err;
  await client.createSchedule({ schedule_id: SCHEDULE, workflow: "OrderProcessing", interval: "10s", input: INPUT });
}

console.log(`Orbit is running at ${server.url} (data in ./.orbit), with a worker for OrderProcessing
and the schedule ${SCHEDULE}, which starts an order every 10 seconds.

Next, in another terminal:
  npx orbit ps                        the executions
  npx orbit schedule list             the schedules
  npx orbit status <execution-id>     one execution
  open http://127.0.0.1:7233/         the web UI

Ctrl-C stops the worker and the server.`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping…");
  worker
    .close()
    .then(() => working)
    .then(() => server.close())
    .then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
