import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyScope, parseApplyFile } from "../../src/cli/apply-plan.js";
import { changedSettings, scopedLabels } from "../../src/scheduler/apply-diff.js";
import { FakeServer } from "./fake-server.js";
import { nightlyOrders } from "./fixtures/api.js";

const YAML = `schedules:
  - schedule_id: nightly-orders
    workflow: OrderProcessing
    cron: "0 2 * * *"
    timezone: Europe/Berlin
    input: {order_id: N-1, customer_id: cust-1, amount: 120.0, items: [{sku: BOOK-1, quantity: 1}]}
    description: Nightly reconciliation order
  - schedule_id: orders-every-10s
    workflow: OrderProcessing
    interval: 10s
`;

describe("the apply file", () => {
  it("reads YAML with {schedules: [...]} and a JSON list", () => {
    expect(parseApplyFile(YAML, "s.yaml").schedules.map((s) => s.schedule_id)).toEqual([
      "nightly-orders",
      "orders-every-10s",
    ]);
    expect(parseApplyFile('[{"schedule_id":"a","workflow":"W","interval":"1m"}]', "s.json").schedules).toHaveLength(1);
  });

  it("reads kind: workflow entries, in a list or under workflows:", () => {
    const list =
      "- {kind: workflow, name: Report, version: 1.0.0}\n- {kind: schedule, schedule_id: r, workflow: Report, cron: '0 1 * * *'}\n";
    expect(parseApplyFile(list, "s.yaml")).toEqual({
      workflows: [{ name: "Report", version: "1.0.0" }],
      schedules: [{ schedule_id: "r", workflow: "Report", cron: "0 1 * * *" }],
      listsSchedules: true,
    });
    const keyed =
      "workflows: [{name: Report, version: 1.0.0}]\nschedules: [{schedule_id: r, workflow: Report, cron: '0 1 * * *'}]\n";
    expect(parseApplyFile(keyed, "s.yaml")).toEqual(parseApplyFile(list, "s.yaml"));
  });

  it.each([
    ["{schedule: []}", /unknown top-level key "schedule"/],
    ["- 1", /entry 1 is not an object/],
    ["- {kind: workflow, name: W}", /entry 1 \(kind: workflow\) needs name and version/],
    ["- {kind: job, schedule_id: a}", /entry 1 has kind "job": use schedule or workflow/],
    ["- {workflow: W}", /schedule 1 has no schedule_id/],
    // A number where the id goes: it said "has no schedule_id".
    ["- {schedule_id: 123, workflow: W}", /schedule 1's schedule_id 123 is not a string; quote it \("123"\)/],
    ["- {schedule_id: a}\n- {schedule_id: a}", /"a" appears twice/],
    ["a: [", /not YAML or JSON/],
    ["42", /give a list of schedules/],
    // A tag YAML does not know is refused, not printed as a Node warning and read as text.
    [
      "- {schedule_id: a, input: !!js/function 'function () {}'}",
      /^s\.yaml: not YAML or JSON: Unresolved tag: .*js\/function at line 1, column 27$/,
    ],
    ["a: 1\na: 2", /not YAML or JSON: Map keys must be unique at line 2, column 1$/],
    [
      `a: &a [x, x, x, x, x, x, x, x, x]\n${["b", "c", "d", "e", "f", "g"].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${"abcdef"[i]}`).join(", ")}]`).join("\n")}`,
      /not YAML or JSON: Excessive alias count indicates a resource exhaustion attack/,
    ],
  ])("refuses %j", (text, message) => {
    expect(() => parseApplyFile(text, "s.yaml")).toThrow(message);
  });
});

describe("the apply diff (server side)", () => {
  it("compares only the settings the file gives, with defaults and key order not counting", () => {
    const s = nightlyOrders as unknown as Record<string, unknown>;
    expect(changedSettings({ schedule_id: "x", workflow: "OrderProcessing" }, s)).toEqual([]);
    expect(changedSettings({ schedule_id: "x", overlap: "skip", dst: "once", paused: false, labels: {} }, s)).toEqual(
      [],
    );
    expect(
      changedSettings(
        {
          schedule_id: "x",
          input: { items: [{ quantity: 1, sku: "BOOK-1" }], amount: 120, customer_id: "cust-1", order_id: "N-1" },
        },
        s,
      ),
    ).toEqual([]);
    expect(
      changedSettings(
        { schedule_id: "x", start_at: "2026-11-15T20:00:00+01:00" },
        { ...s, start_at: "2026-11-15T19:00:00Z" },
      ),
    ).toEqual([]);
    expect(changedSettings({ schedule_id: "x", cron: "30 2 * * *", jitter: null }, { ...s, jitter: "30s" })).toEqual([
      { setting: "cron", from: "0 2 * * *", to: "30 2 * * *" },
      { setting: "jitter", from: "30s", to: null },
    ]);
  });

  it("stamps the scope's labels over the file's, or over the stored ones when the file gives none", () => {
    expect(scopedLabels(undefined, { team: "ops" }, {})).toBeUndefined();
    expect(scopedLabels({ a: "1" }, { team: "ops" }, {})).toEqual({ a: "1" });
    expect(scopedLabels(undefined, { team: "ops" }, { "orbit/owner": "b" })).toEqual({
      team: "ops",
      "orbit/owner": "b",
    });
    expect(scopedLabels({ a: "1" }, { team: "ops" }, { "orbit/owner": "b" })).toEqual({ a: "1", "orbit/owner": "b" });
  });
});

describe("the apply scope", () => {
  it("reads --owner and --selector pairs", () => {
    expect(applyScope("billing", ["team=ops,env=prod", "tier=1"])).toEqual({
      team: "ops",
      env: "prod",
      tier: "1",
      "orbit/owner": "billing",
    });
    expect(() => applyScope(undefined, ["team"])).toThrow('--selector "team" is not key=value');
    // Neither: the default set, so that `--prune` alone prunes what earlier applies made.
    expect(applyScope(undefined, [])).toEqual({ "orbit/owner": "default" });
    expect(applyScope(undefined, ["team=ops"])).toEqual({ team: "ops" });
  });

  it("refuses an empty --owner before sending (it stamped orbit/owner= on every schedule)", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "orbit-apply-")), "ok.yaml");
    writeFileSync(file, YAML);
    const server = new FakeServer(() => undefined);
    for (const owner of ["", "  "]) {
      const r = await server.run(["schedule", "apply", "-f", file, "--owner", owner]);
      expect([r.code, r.stderr.split("\n")[0]]).toEqual([
        2,
        "orbit: --owner is empty: give the apply set's name, or leave --owner out for the default set",
      ]);
    }
    expect(server.requests).toEqual([]);
  });
});

describe("orbit schedule apply", () => {
  const file = join(mkdtempSync(join(tmpdir(), "orbit-apply-")), "schedules.yaml");
  writeFileSync(file, YAML);
  const answer = (dryRun: boolean) => ({
    status: 200,
    body: {
      dry_run: dryRun,
      scope: { "orbit/owner": "billing" },
      workflows: [],
      steps: [
        {
          action: "update",
          schedule_id: "nightly-orders",
          changes: [{ setting: "timezone", from: "UTC", to: "Europe/Berlin" }],
        },
        { action: "create", schedule_id: "orders-every-10s" },
        { action: "delete", schedule_id: "hourly-check" },
      ],
      created: 1,
      updated: 1,
      unchanged: 0,
      deleted: 1,
    },
  });

  it("sends the whole file, the scope and the flags in one request, and prints the server's plan", async () => {
    const server = new FakeServer((req) => (req.path === "/v1/schedules/apply" ? answer(true) : undefined));
    const r = await server.run(["schedule", "apply", "-f", file, "--owner", "billing", "--prune", "--dry-run"]);
    expect(r).toEqual({
      code: 0,
      stdout:
        'would update nightly-orders\n  timezone: "UTC" → "Europe/Berlin"\nwould create orders-every-10s\nwould delete hourly-check\ndry run, nothing changed: 1 created, 1 updated, 0 unchanged, 1 deleted\n',
      stderr: "",
    });
    expect(server.requests.map((q) => `${q.method} ${q.path}`)).toEqual(["POST /v1/schedules/apply"]);
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.scope).toEqual({ "orbit/owner": "billing" });
    expect(body.prune).toBe(true);
    expect(body.dry_run).toBe(true);
    expect((body.schedules as unknown[]).length).toBe(2);
  });

  it("prints what it did", async () => {
    const server = new FakeServer((req) => (req.path === "/v1/schedules/apply" ? answer(false) : undefined));
    const r = await server.run(["schedule", "apply", "--file", file, "--selector", "orbit/owner=billing", "--prune"]);
    expect(r.stdout).toBe(
      'updated nightly-orders\n  timezone: "UTC" → "Europe/Berlin"\ncreated orders-every-10s\ndeleted hourly-check\n1 created, 1 updated, 0 unchanged, 1 deleted\n',
    );
  });

  it("prunes the default apply set with --prune alone (docs/cli.md § Apply sets)", async () => {
    const server = new FakeServer((req) => (req.path === "/v1/schedules/apply" ? answer(false) : undefined));
    const r = await server.run(["schedule", "apply", "-f", file, "--prune"]);
    expect(r.code).toBe(0);
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body.scope).toEqual({ "orbit/owner": "default" });
    expect(body.prune).toBe(true);
  });

  it("refuses a missing file as bad usage (exit 2), sending nothing, as --input @FILE does", async () => {
    const server = new FakeServer(() => undefined);
    const r = await server.run(["schedule", "apply", "-f", "/nonexistent.yaml"]);
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr: "orbit: cannot read /nonexistent.yaml: ENOENT\n(add --help for usage)\n",
    });
    expect(server.requests).toEqual([]);
  });
});
