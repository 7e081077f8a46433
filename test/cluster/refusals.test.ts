/** docs/cluster.md: the cluster modes need PostgreSQL; on SQLite the server refuses to start, saying why. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startServer } from "../../src/server/server.js";

describe("cluster modes on SQLite", () => {
  let dir = "";
  const saved = process.env.ORBIT_DATABASE_URL;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orbit-cluster-"));
    delete process.env.ORBIT_DATABASE_URL;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    if (saved !== undefined) process.env.ORBIT_DATABASE_URL = saved;
  });

  for (const cluster of ["active-standby", "shared"] as const) {
    it(`--cluster ${cluster} is refused with a clear message`, async () => {
      await expect(startServer({ cluster, dataDir: dir, port: 0, logger: "silent" })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: `--cluster ${cluster} needs PostgreSQL (--database postgres://…): SQLite is one process's file`,
      });
    });
  }
});
