/**
 * The access matrix (docs/security.md § Access matrix), generated: every operation of the server's
 * OpenAPI document × ten callers × a workflow inside and one outside `Order*`, each on a fresh
 * valid request. Asserts what the documented table says: an allowed request is never 401/403/404
 * or 5xx (lists show only permitted workflows); a denied one is 401 UNAUTHENTICATED without a known
 * token, 404 NOT_FOUND (as for a missing id) when the caller may not see the stored object, and 403
 * PERMISSION_DENIED otherwise, and changes nothing in the database (every row of every table
 * compared before and after). The table must list exactly the document's operations. A task a
 * worker route reports on is leased by the caller itself when it is a worker allowed the workflow,
 * else by `worker-all`; `worker-peer` (allowed every workflow) never takes one, so it is the
 * identity that reports on another's lease under the same worker_id.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type Action,
  type Documented,
  documentedMatrix,
  type Rule,
  requestFor,
  workflowsShown,
} from "./access-matrix-cases.js";
import { startTestServer, type TestServer } from "./helpers.js";

const ALL: Action[] = ["schedule", "start", "read", "cancel"];
interface Role {
  token: string | null;
  kind: "client" | "worker" | "nobody";
  globs: string[];
  actions: Action[];
  /** A worker that leases the tasks it is then asked to report on (all but worker-peer). */
  takesLeases?: boolean;
}
const ROLES: Record<string, Role> = {
  admin: { token: "t-admin", kind: "client", globs: ["*"], actions: ALL },
  reader: { token: "t-reader", kind: "client", globs: ["Order*"], actions: ["read"] },
  starter: { token: "t-starter", kind: "client", globs: ["Order*"], actions: ["start"] },
  scheduler: { token: "t-scheduler", kind: "client", globs: ["Order*"], actions: ["schedule"] },
  canceller: { token: "t-canceller", kind: "client", globs: ["Order*"], actions: ["cancel"] },
  worker: { token: "t-worker", kind: "worker", globs: ["Order*"], actions: [], takesLeases: true },
  "worker-all": { token: "t-worker-all", kind: "worker", globs: ["*"], actions: [], takesLeases: true },
  "worker-peer": { token: "t-worker-peer", kind: "worker", globs: ["*"], actions: [] },
  "no token": { token: null, kind: "nobody", globs: [], actions: [] },
  "unknown token": { token: "t-nobody-knows-this", kind: "nobody", globs: [], actions: [] },
};
const WORKFLOWS = ["OrderProcessing", "Billing"];
const sha = (token: string) => createHash("sha256").update(token).digest("hex");
const matches = (globs: string[], workflow: string) =>
  globs.some((g) => new RegExp(`^${g.replace(/\*/g, ".*")}$`).test(workflow));

/** Whether `role` may make the request on `workflow`, by the documented rule. */
function allowed(doc: Documented, role: Role, workflow: string): boolean {
  if (doc.client.kind === "open") return true;
  if (role.kind === "nobody") return false;
  const r: Rule = role.kind === "client" ? doc.client : doc.worker;
  switch (r.kind) {
    case "open":
    case "any":
      return true;
    case "never":
      return false;
    case "its":
      return matches(role.globs, workflow);
    case "its-leases":
      return matches(role.globs, workflow) && role.takesLeases === true;
    case "action":
      // An object it may not see is refused as missing, whatever else it may do (a `cancel`-only
      // identity cancelled executions it could not read, and got their input back; a tester).
      return (
        role.actions.includes(r.action) &&
        matches(role.globs, workflow) &&
        (doc.unseenWithout === undefined || maySee(role, doc.unseenWithout, workflow))
      );
  }
}

/** Whether `role` may see a stored object of `workflow` that takes `action` to see (workers: `read` on theirs). */
const maySee = (role: Role, action: Action, workflow: string) =>
  matches(role.globs, workflow) && (role.kind === "worker" ? action === "read" : role.actions.includes(action));

/** The workflows `role` may see in a list filtered by `action` (workers: their workflows). */
const mayList = (role: Role, action: Action | undefined, workflow: string) =>
  role.kind === "worker"
    ? matches(role.globs, workflow)
    : action === undefined || (role.actions.includes(action) && matches(role.globs, workflow));

let t: TestServer;
let dir: string;
let db: Database.Database;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "orbit-matrix-"));
  const config = join(dir, "identities.yaml");
  const identities = Object.entries(ROLES)
    .filter(([, r]) => r.kind !== "nobody")
    .map(
      ([name, r]) =>
        `  - name: ${name}\n    token_sha256: ${sha(r.token!)}\n    kind: ${r.kind}\n    allow:\n      - workflows: ${JSON.stringify(r.globs)}\n${r.kind === "client" ? `        actions: [${r.actions.join(", ")}]\n` : ""}`,
    )
    .join("");
  writeFileSync(config, `identities:\n${identities}`);
  t = await startTestServer({ config, worker: { pollTimeoutMs: 0 } });
  for (const name of WORKFLOWS) {
    for (const version of ["0.0.1", "1.0.0"]) {
      const r = await t.call("POST", "/v1/workflows", { name, version }, { authorization: "Bearer t-admin" });
      expect(r.status).toBe(201);
    }
  }
  db = new Database(join(t.dir, "orbit.db"), { readonly: true, fileMustExist: true });
});
afterAll(async () => {
  db?.close();
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Every row of every table, hashed: what a denied request must leave as it was. Hashed again only
 * when another connection has committed since the last hash (SQLite's `data_version`), so the
 * denied requests in a row, which change nothing, do not each read the whole database twice.
 */
let hashed: { version: number; hash: string } | null = null;
function fingerprint(): string {
  const version = db.pragma("data_version", { simple: true }) as number;
  if (hashed?.version !== version) hashed = { version, hash: hashAll() };
  return hashed.hash;
}

function hashAll(): string {
  const hash = createHash("sha256");
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
    name: string;
  }[];
  for (const { name } of tables) {
    hash.update(name);
    // Sorted here: not every table has a rowid to order by (orbit_schedules is WITHOUT ROWID).
    const rows = (db.prepare(`SELECT * FROM "${name}"`).all() as unknown[]).map((row) => JSON.stringify(row));
    for (const row of rows.sort()) hash.update(row);
  }
  return hash.digest("hex");
}

it("every route × every caller × a workflow inside and outside its glob holds the documented matrix", async () => {
  const documented = documentedMatrix();
  const doc = (await t.call("GET", "/v1/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
  const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
  );
  expect(ops.length).toBeGreaterThan(40);
  // The table and the document name the same operations: a new route needs its row.
  expect([...documented.keys()].sort()).toEqual([...ops].sort());

  let n = 0;
  const as = (role: string) => (method: string, path: string, body?: unknown) =>
    t.call(method, path, body, ROLES[role]!.token === null ? {} : { authorization: `Bearer ${ROLES[role]!.token}` });
  const unique = (p: string) => `${p}-${++n}`;
  const wrong: string[] = [];
  const counts = { requests: 0, allowed2xx: 0, allowed4xx: 0, denied401: 0, denied403: 0, denied404: 0 };
  for (const op of ops) {
    const rules = documented.get(op)!;
    for (const workflow of WORKFLOWS) {
      for (const [name, role] of Object.entries(ROLES)) {
        const leaser = role.takesLeases && matches(role.globs, workflow) ? name : "worker-all";
        const req = await requestFor(op, workflow, { admin: as("admin"), fixtureWorker: as(leaser), unique });
        const expectAllowed = allowed(rules, role, workflow);
        const before = expectAllowed ? "" : fingerprint();
        const r = await as(name)(req.method, req.path, req.body);
        counts.requests++;
        const what = `${op} on ${workflow} as ${name}: ${r.status} ${r.text.slice(0, 160)}`;
        if (r.status >= 500) wrong.push(`5xx: ${what}`);
        else if (expectAllowed) {
          if ([401, 403, 404].includes(r.status)) wrong.push(`should be allowed: ${what}`);
          else if (r.status < 300) counts.allowed2xx++;
          else counts.allowed4xx++;
          const lists = rules.client.kind === "any" ? rules.client.lists : undefined;
          if (req.method === "GET" && r.status === 200 && (lists !== undefined || rules.worker.kind === "any")) {
            for (const shown of workflowsShown(r.body)) {
              if (!mayList(role, lists, shown)) wrong.push(`lists ${shown}: ${what}`);
            }
          }
        } else {
          // Refused for what it is (a worker on a client route), the caller learns nothing: 403.
          // Refused on an object it may not see: the answer for a missing id.
          const rule = role.kind === "client" ? rules.client : rules.worker;
          const unseen =
            rules.unseenWithout !== undefined && rule.kind !== "never" && !maySee(role, rules.unseenWithout, workflow);
          const status = role.kind === "nobody" ? 401 : unseen ? 404 : 403;
          const code = { 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND" }[status];
          if (r.status !== status || r.body?.code !== code) wrong.push(`should be ${status}: ${what}`);
          else if (status === 404 && !/^(schedule|execution) \S+ does not exist$/.test(r.body.message))
            wrong.push(`404 unlike a missing id's: ${what}`);
          else counts[`denied${status}`]++;
          if (fingerprint() !== before) wrong.push(`denied but changed the database: ${what}`);
        }
      }
    }
  }
  // The filtered lists are not vacuous: the admin sees both workflows, the reader its own.
  for (const path of ["/v1/schedules?limit=1000", "/v1/executions?limit=1000", "/v1/workflows"]) {
    const admin = workflowsShown((await as("admin")("GET", path)).body);
    expect({ path, shown: [...admin].sort() }).toEqual({ path, shown: ["Billing", "OrderProcessing"] });
  }
  expect([...workflowsShown((await as("reader")("GET", "/v1/executions?limit=1000")).body)]).toEqual([
    "OrderProcessing",
  ]);
  expect([...workflowsShown((await as("scheduler")("GET", "/v1/schedules?limit=1000")).body)]).toEqual([
    "OrderProcessing",
  ]);
  expect(wrong).toEqual([]);
  console.log(`access matrix: ${ops.length} operations, ${JSON.stringify(counts)}`);
  expect(counts.denied401).toBeGreaterThan(0);
  expect(counts.denied403).toBeGreaterThan(0);
  expect(counts.denied404).toBeGreaterThan(0);
  expect(counts.allowed2xx).toBeGreaterThan(counts.allowed4xx);
}, 600_000);
