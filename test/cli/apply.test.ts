import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changedSettings, parseScheduleFile, planApply } from "../../src/cli/apply-plan.js";
import type { ScheduleJson } from "../../src/client/types.js";
import { FakeServer } from "./fake-server.js";
import { hourlyCheck, nightlyOrders } from "./fixtures/api.js";

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
    expect(parseScheduleFile(YAML, "s.yaml").map((s) => s.schedule_id)).toEqual(["nightly-orders", "orders-every-10s"]);
    expect(parseScheduleFile('[{"schedule_id":"a","workflow":"W","interval":"1m"}]', "s.json")).toHaveLength(1);
  });

  it.each([
    ["{schedule: []}", /unknown top-level key "schedule"/],
    ["- 1", /schedule 1 is not an object/],
    ["- {workflow: W}", /schedule 1 has no schedule_id/],
    ["- {schedule_id: a}\n- {schedule_id: a}", /"a" appears twice/],
    ["a: [", /not YAML or JSON/],
    ["42", /give a list of schedules/],
  ])("refuses %j", (text, message) => {
    expect(() => parseScheduleFile(text, "s.yaml")).toThrow(message);
  });
});

describe("the apply plan", () => {
  it("compares only the settings the file gives, with defaults and key order not counting", () => {
    const s = nightlyOrders;
    expect(changedSettings({ schedule_id: s.schedule_id, workflow: "OrderProcessing" }, s)).toEqual({});
    expect(changedSettings({ schedule_id: "x", overlap: "skip", dst: "once", paused: false }, s)).toEqual({});
    expect(
      changedSettings(
        {
          schedule_id: "x",
          input: { items: [{ quantity: 1, sku: "BOOK-1" }], amount: 120, customer_id: "cust-1", order_id: "N-1" },
        },
        s,
      ),
    ).toEqual({});
    expect(
      changedSettings(
        { schedule_id: "x", start_at: "2026-11-15T20:00:00+01:00" },
        { ...s, start_at: "2026-11-15T19:00:00Z" },
      ),
    ).toEqual({});
    expect(changedSettings({ schedule_id: "x", cron: "30 2 * * *", jitter: null }, { ...s, jitter: "30s" })).toEqual({
      cron: "30 2 * * *",
      jitter: null,
    });
  });

  it("creates, updates, leaves alone and prunes", () => {
    const entries = parseScheduleFile(YAML, "s.yaml");
    const server: ScheduleJson[] = [{ ...nightlyOrders, description: "old" }, hourlyCheck];
    expect(planApply(entries, server, true)).toEqual([
      {
        action: "update",
        id: "nightly-orders",
        body: { description: "Nightly reconciliation order" },
        from: { description: "old" },
      },
      { action: "create", id: "orders-every-10s", body: entries[1] },
      { action: "delete", id: "hourly-check", body: {} },
    ]);
    expect(planApply(entries, server, false).map((s) => s.action)).toEqual(["update", "create"]);
  });
});

describe("orbit schedule apply", () => {
  const file = join(mkdtempSync(join(tmpdir(), "orbit-apply-")), "schedules.yaml");
  writeFileSync(file, YAML);
  const list = { status: 200, body: { schedules: [nightlyOrders, hourlyCheck], next_cursor: null } };
  const valid = { status: 200, body: { valid: 2, actions: ["update", "create"] } };

  it("prints what it would do and changes nothing with --dry-run", async () => {
    const server = new FakeServer((req) =>
      req.method === "GET" ? list : req.path === "/v1/schedules/validate" ? valid : undefined,
    );
    const r = await server.run(["schedule", "apply", "-f", file, "--prune", "--dry-run"]);
    expect(r).toEqual({
      code: 0,
      stdout:
        "unchanged nightly-orders\nwould create orders-every-10s\nwould delete hourly-check\ndry run, nothing changed: 1 created, 0 updated, 1 unchanged, 1 deleted\n",
      stderr: "",
    });
    // The server checks the whole file (and writes nothing); no write follows a dry run.
    expect(server.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      "GET /v1/schedules?limit=1000",
      "POST /v1/schedules/validate",
    ]);
  });

  it("creates and prunes", async () => {
    const server = new FakeServer((req) => {
      if (req.method === "GET") return list;
      if (req.path === "/v1/schedules/validate") return valid;
      if (req.path === "/v1/schedules/batch")
        return { status: 201, body: { created: 1, schedule_ids: ["orders-every-10s"] } };
      if (req.method === "DELETE") return { status: 204 };
      return undefined;
    });
    const r = await server.run(["schedule", "apply", "--file", file, "--prune"]);
    expect(r.stdout).toBe(
      "unchanged nightly-orders\ncreated orders-every-10s\ndeleted hourly-check\n1 created, 0 updated, 1 unchanged, 1 deleted\n",
    );
    expect(server.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      "GET /v1/schedules?limit=1000",
      "POST /v1/schedules/validate",
      "POST /v1/schedules/batch",
      "DELETE /v1/schedules/hourly-check",
    ]);
  });

  it("refuses a missing file with exit 1", async () => {
    const r = await new FakeServer(() => undefined).run(["schedule", "apply", "-f", "/nonexistent.yaml"]);
    expect(r).toEqual({ code: 1, stdout: "", stderr: "orbit: cannot read /nonexistent.yaml: ENOENT\n" });
  });
});
