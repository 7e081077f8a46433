/**
 * startServer's options from plain JavaScript (docs/operations.md § Embed): a key it does not know,
 * here or in `retention` and `worker`, and a value of the wrong type are refused with a StartupError
 * (code INVALID_ARGUMENT) naming the option as the caller wrote it, before anything opens: no data
 * folder is created and nothing listens. They were taken for the default without a word: `datadir`
 * kept the data in ./.orbit, `retention: { maxAgeMs: "30d" }` kept every execution forever,
 * `sqliteSynchronous: "off"` ran FULL (a tester's embedding app).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerOptions, StartupError, startServer } from "../../src/server/server.js";

/** A port nothing listens on (bound once by the system, then let go). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const TAKES =
  "it takes port, host, dataDir, sqliteSynchronous, sqliteCacheMb, database, databaseSchema, databaseWaitMs, databaseAnswerTimeoutMs, cluster, maxActiveExecutions, metricsScheduleLabels, misfireGraceMs, ledgerRetention, closeGraceMs, requestTimeoutMs, clock, logger, config, retention and worker";
const RETENTION_TAKES = "it takes maxAgeMs, byWorkflow, maxCount, batchSize and intervalMs";

/** [what, the options beside port and logger, the folder the options name, target, message]. */
const REFUSED: ReadonlyArray<[string, (dir: string) => Record<string, unknown>, string, string]> = [
  [
    "a misspelt dataDir",
    (dir) => ({ datadir: dir }),
    "datadir",
    `startServer has no setting "datadir" (did you mean "dataDir"?): ${TAKES}`,
  ],
  [
    "a snake-cased dataDir",
    (dir) => ({ data_dir: dir }),
    "data_dir",
    `startServer has no setting "data_dir" (did you mean "dataDir"?): ${TAKES}`,
  ],
  [
    "the --log-level flag's name",
    (dir) => ({ dataDir: dir, loglevel: "silent" }),
    "loglevel",
    `startServer has no setting "loglevel" (did you mean "logger"?): ${TAKES}`,
  ],
  [
    "the --misfire-grace flag's name",
    (dir) => ({ dataDir: dir, misfireGrace: "5m" }),
    "misfireGrace",
    `startServer has no setting "misfireGrace" (did you mean "misfireGraceMs"?): ${TAKES}`,
  ],
  [
    "the CLI's own --shutdown-timeout",
    (dir) => ({ dataDir: dir, shutdownTimeout: "10s" }),
    "shutdownTimeout",
    `startServer has no setting "shutdownTimeout": ${TAKES}`,
  ],
  [
    "a retention given as the flag's duration",
    (dir) => ({ dataDir: dir, retention: "30d" }),
    "retention",
    'retention must be an object such as { maxAgeMs: 2592000000 } (30 days; docs/operations.md § Retention), got "30d"',
  ],
  [
    "an unknown key of retention",
    (dir) => ({ dataDir: dir, retention: { olderThan: "30d" } }),
    "retention.olderThan",
    `startServer's retention has no setting "olderThan" (did you mean "maxAgeMs"?): ${RETENTION_TAKES}`,
  ],
  [
    "a retention age that is a duration string (nothing was ever deleted)",
    (dir) => ({ dataDir: dir, retention: { maxAgeMs: "30d" } }),
    "retention.maxAgeMs",
    'retention.maxAgeMs must be a whole number of milliseconds, got "30d" (30d is 2592000000 ms)',
  ],
  [
    "a workflow's retention that is a string",
    (dir) => ({ dataDir: dir, retention: { byWorkflow: { Audit: "365d" } } }),
    "retention.byWorkflow.Audit",
    'retention.byWorkflow.Audit must be a whole number of milliseconds, got "365d" (365d is 31536000000 ms)',
  ],
  [
    "a negative retention age (it deleted every ended execution)",
    (dir) => ({ dataDir: dir, retention: { maxAgeMs: -1 } }),
    "retention.maxAgeMs",
    "retention.maxAgeMs must be at least 0 ms, got -1",
  ],
  [
    "an unknown key of worker",
    (dir) => ({ dataDir: dir, worker: { lease: 5000 } }),
    "worker.lease",
    'startServer\'s worker has no setting "lease" (did you mean "leaseMs"?): it takes leaseMs, heartbeatMs, pollTimeoutMs, reaper and wallSteps',
  ],
  [
    "a misfire grace that is a duration string",
    (dir) => ({ dataDir: dir, misfireGraceMs: "60s" }),
    "misfireGraceMs",
    'misfireGraceMs must be a whole number of milliseconds from 1000 (1s) to 365 days, got "60s" (60s is 60000 ms)',
  ],
  [
    "an unknown sqliteSynchronous (it ran FULL)",
    (dir) => ({ dataDir: dir, sqliteSynchronous: "off" }),
    "sqliteSynchronous",
    'sqliteSynchronous must be "full" or "normal", got "off"',
  ],
  [
    "a port that is a string (the message named --port)",
    (dir) => ({ dataDir: dir, port: "7307" }),
    "port",
    'port must be a whole number from 0 to 65535, got "7307"',
  ],
  [
    "an unknown logger level (pino's own text said 'custom levels')",
    (dir) => ({ dataDir: dir, logger: "verbose" }),
    "logger",
    'logger must be a pino logger or a level: "trace", "debug", "info", "warn", "error", "fatal" or "silent", got "verbose"',
  ],
  [
    "a cluster mode Orbit does not have",
    (dir) => ({ dataDir: dir, cluster: "multi" }),
    "cluster",
    'cluster must be "single", "active-standby" or "shared", got "multi"',
  ],
  [
    "a close grace that is a duration string",
    (dir) => ({ dataDir: dir, closeGraceMs: "3s" }),
    "closeGraceMs",
    'closeGraceMs must be a whole number of milliseconds, got "3s" (3s is 3000 ms)',
  ],
  // A number out of range keeps the message `orbit server` gives for its flag, now a StartupError.
  [
    "a ledger retention out of range",
    (dir) => ({ dataDir: dir, ledgerRetention: -5 }),
    "ledgerRetention",
    "--ledger-retention must be a whole number from 1 to 1000000, got -5",
  ],
  [
    "a cluster mode on SQLite",
    (dir) => ({ dataDir: dir, cluster: "shared" }),
    "cluster",
    "--cluster shared needs PostgreSQL (--database postgres://…): SQLite is one process's file",
  ],
];

describe("startServer refuses options it cannot take, before it opens anything", () => {
  let dir = "";
  const savedUrl = process.env.ORBIT_DATABASE_URL;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "orbit-embed-options-"));
    // The cluster case is about SQLite; a PostgreSQL URL in the environment would answer it.
    delete process.env.ORBIT_DATABASE_URL;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    if (savedUrl !== undefined) process.env.ORBIT_DATABASE_URL = savedUrl;
  });

  for (const [what, extra, target, message] of REFUSED) {
    it(what, async () => {
      const port = await freePort();
      const data = join(dir, target);
      const defaultFolderBefore = existsSync(".orbit");
      const err = await startServer({ port, logger: "silent", ...extra(data) } as ServerOptions).then(
        async (server) => {
          await server.close();
          return null;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StartupError);
      expect(err).toMatchObject({ code: "INVALID_ARGUMENT", target, message });
      expect(existsSync(data)).toBe(false);
      expect(existsSync(".orbit")).toBe(defaultFolderBefore);
      expect(await listening(port)).toBe(false);
    });
  }

  it("no options object: said so", async () => {
    for (const given of [null, "./.orbit", 7233]) {
      await expect(startServer(given as never)).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        target: "options",
        message: `startServer takes an options object such as { port: 7233, dataDir: "./.orbit" }, got ${given === "./.orbit" ? '"./.orbit"' : given}`,
      });
    }
  });

  it("every option of every nested object, and undefined for defaults, is taken", async () => {
    const server = await startServer({
      port: 0,
      host: undefined,
      dataDir: join(dir, "every"),
      logger: "silent",
      sqliteSynchronous: "normal",
      misfireGraceMs: 60_000,
      closeGraceMs: 1000,
      requestTimeoutMs: 30_000,
      databaseWaitMs: 0,
      retention: { maxAgeMs: 86_400_000, byWorkflow: { Audit: 0 }, maxCount: 10, batchSize: 5, intervalMs: 60_000 },
      worker: { leaseMs: 30_000, heartbeatMs: 5000, pollTimeoutMs: 0, reaper: true, wallSteps: false },
    });
    try {
      expect(await listening(server.port)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
