/**
 * `npm start`: an Orbit server on the embedded SQLite default (./.orbit, reused by later runs), a
 * worker running OrderProcessing, and the demo schedule `orders-every-10s`. Ctrl-C stops both.
 * `npm start -- --port N --data-dir D` takes `orbit server`'s two flags for a second one beside the
 * first (test/e2e/npm-start.test.ts).
 * It imports Orbit by its package name, as an application would: `npm run build` compiles it to
 * examples/dist/ and `npm start` runs that with plain Node (no TypeScript loader at run time).
 */
import { parseArgs } from "node:util";
import { OrbitClient, OrbitError, Worker } from "orbit-scheduler";
import { StartupError, startServer } from "orbit-scheduler/server";
import { OrderProcessing } from "./order-processing.js";

const SCHEDULE = "orders-every-10s";
type Schedule = Awaited<ReturnType<OrbitClient["getSchedule"]>>;
const INPUT = { order_id: "R-1", customer_id: "cust-1", amount: 120.0, items: [{ sku: "BOOK-1", quantity: 1 }] };
const USAGE = "usage: npm start -- [--port N] [--data-dir DIR]   (defaults: 7233, ./.orbit)";

/** `--port` and `--data-dir`, as `orbit server` takes them; anything else is refused with the usage. */
function flags(): { port?: number; dataDir?: string } {
  let values: { port?: string; "data-dir"?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: { port: { type: "string" }, "data-dir": { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (err) {
    console.error(`orbit: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  // Asked for: the usage on stdout, exit 0 (it was "Unknown option '--help'", exit 2).
  if (values.help === true) {
    console.log(`${USAGE}\nStarts an Orbit server on SQLite with a worker and the demo schedule orders-every-10s.`);
    process.exit(0);
  }
  const out: { port?: number; dataDir?: string } = {};
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65535) {
      console.error(`orbit: --port ${values.port}: give a whole number from 0 to 65535\n${USAGE}`);
      process.exit(2);
    }
    out.port = port;
  }
  if (values["data-dir"] !== undefined) out.dataDir = values["data-dir"];
  return out;
}

const options = flags();
const dataDir = options.dataDir ?? "./.orbit";
// A start-up failure (the port taken by an earlier `npm start`, a data folder that cannot be made)
// is one line naming the address or file, as `orbit server` prints it, not a stack trace, and how
// to start this one beside the other.
const server = await startServer({ ...options, logger: process.env.ORBIT_LOG_LEVEL ?? "warn" }).catch(
  (err: unknown) => {
    if (!(err instanceof StartupError)) throw err;
    // Another server on the port or the folder: how to start this one beside it.
    const beside = /cannot listen|another Orbit server|locked by another process/.test(err.message)
      ? "\n(npm start takes them too: npm start -- --port 7234 --data-dir .orbit-2)"
      : "";
    console.error(`orbit: ${err.message}${beside}`);
    process.exit(1);
  },
);
const client = new OrbitClient({ server: server.url });
// Registered before the schedule is made, which needs it. A data folder where someone registered
// OrderProcessing@1.0.0 by hand with another schema keeps that registration: the worker below says
// so once and runs this version anyway (docs/workflows.md), as `npm start` does not stop for it.
await client
  .registerWorkflow({
    name: OrderProcessing.name,
    version: OrderProcessing.version,
    input_schema: OrderProcessing.input,
    description: OrderProcessing.description,
  })
  .catch((err: unknown) => {
    if (!(err instanceof OrbitError && err.code === "ALREADY_EXISTS")) throw err;
  });
const quiet = process.env.ORBIT_LOG_LEVEL === undefined;
const worker = new Worker({
  server: server.url,
  workflows: [OrderProcessing],
  ...(quiet ? { logger: { info: () => undefined, warn: console.warn, error: console.error } } : {}),
});
const working = worker.run();

let schedule: Schedule;
try {
  schedule = await client.getSchedule(SCHEDULE);
} catch (err) {
  if (!(err instanceof OrbitError && err.code === "NOT_FOUND")) throw err;
  schedule = await client
    .createSchedule({ schedule_id: SCHEDULE, workflow: "OrderProcessing", interval: "10s", input: INPUT })
    .catch((refused: unknown) => {
      // The hand-registered version's schema refuses the demo's input: one line, and the way out.
      if (!(refused instanceof OrbitError && refused.code === "INVALID_ARGUMENT")) throw refused;
      console.error(
        `orbit: ${refused.message}\n(${dataDir} holds an OrderProcessing@1.0.0 registered with another input schema; start the demo on a folder of its own: npm start -- --data-dir .orbit-demo)`,
      );
      process.exit(1);
    });
}

// The CLI's default server is port 7233: another port is named in each command.
const at = server.port === 7233 ? "" : ` --server ${server.url}`;
const next = [
  [`node bin/orbit.js ps${at}`, "the executions"],
  [`node bin/orbit.js schedule list${at}`, "the schedules"],
  [`node bin/orbit.js status${at} <execution-id>`, "one execution"],
  [`open ${server.url}/`, "the web UI"],
].map(([command, what]) => `  ${command!.padEnd(at.length + 42)}${what}`);
// Before the banner: a Ctrl-C (or a test's SIGTERM) right after it must stop both cleanly, not
// find Node's default handler (which kills the process at once).
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

console.log(`Orbit is running at ${server.url} (data in ${dataDir}), with a worker for OrderProcessing
and the schedule ${SCHEDULE}, ${whatItDoes(schedule)}.

Next, in another terminal:
${next.join("\n")}

Ctrl-C stops the worker and the server.`);

/**
 * What the demo schedule does as the data folder has it: an earlier run's schedule may have been
 * paused, re-timed or ended since (the banner said "every 10 seconds" of a paused one).
 */
function whatItDoes(s: Schedule): string {
  if (s.state === "ended") return "which has ended";
  const timing = s.interval ? `every ${s.interval}` : `on cron ${s.cron}`;
  if (s.paused)
    return `which is paused (${timing}): node bin/orbit.js schedule resume ${SCHEDULE}${at} starts it again`;
  return s.interval === "10s" ? "which starts an order every 10 seconds" : `which starts an order ${timing}`;
}
