/** POST /v1/schedules/batch: many schedules in one request and one transaction, all or none. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
  await t.registerOrders();
});
afterEach(async () => {
  await t.stop();
});

const many = (n: number, prefix = "b") =>
  Array.from({ length: n }, (_, i) => ({ ...SEED_SCHEDULE, schedule_id: `${prefix}-${i}` }));

describe("POST /v1/schedules/batch", () => {
  it("creates every schedule as POST /v1/schedules would, answering their ids in order", async () => {
    const r = await t.call("POST", "/v1/schedules/batch", { schedules: many(1000) });
    expect(r.status).toBe(201);
    expect(r.body.created).toBe(1000);
    expect(r.body.schedule_ids).toEqual(many(1000).map((s) => s.schedule_id));
    const single = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "single" });
    const one = await t.call("GET", "/v1/schedules/b-999");
    expect(one.status).toBe(200);
    expect({ ...one.body, schedule_id: "single" }).toEqual(single.body);
  });

  it("takes a body past the 2 MB of other routes (a schedules file's routes take 16 MB), and says the bound past it", async () => {
    // 1,000 schedules of 3 KB each (a description, a long customer id): 3 MB, refused as "larger
    // than 2 MB" before.
    const described = many(1000, "big").map((s) => ({
      ...s,
      description: "d".repeat(1000),
      input: { ...s.input, customer_id: "c".repeat(2000) },
    }));
    const r = await t.call("POST", "/v1/schedules/batch", { schedules: described });
    expect(r.status).toBe(201);
    expect(r.body.created).toBe(1000);
    for (const path of ["/v1/schedules/batch", "/v1/schedules/validate", "/v1/schedules/apply"]) {
      const huge = await t.call("POST", path, `{"schedules": [], "pad": "${"x".repeat(17 * 1024 * 1024)}"}`);
      expect({ path, status: huge.status, body: huge.body }).toEqual({
        path,
        status: 400,
        body: {
          code: "INVALID_ARGUMENT",
          message:
            "the request body is larger than 16777216 bytes (16 MB); send the schedules in several requests (a file as several files)",
        },
      });
    }
    // Every other route keeps 2 MB.
    const single = await t.call("POST", "/v1/schedules", {
      ...SEED_SCHEDULE,
      description: "d".repeat(3 * 1024 * 1024),
    });
    expect(single.status).toBe(400);
    expect(single.body.message).toContain("larger than 2097152 bytes (2 MB)");
  });

  it("keeps each input's number text (120.0) as written", async () => {
    const body = `{"schedules": [${['"x-1"', '"x-2"']
      .map(
        (id) =>
          `{"schedule_id": ${id}, "workflow": "OrderProcessing", "interval": "10s", "input": {"order_id": "R-1", "customer_id": "c", "amount": 120.0, "items": []}}`,
      )
      .join(",")}]}`;
    const r = await t.call("POST", "/v1/schedules/batch", body);
    expect(r.status).toBe(201);
    expect((await t.call("GET", "/v1/schedules/x-2")).text).toContain('"amount":120.0');
  });

  it("refuses the whole batch, naming the item, when one is invalid; nothing is created", async () => {
    const items = many(5);
    items[3] = { ...items[3]!, interval: "soon" };
    const r = await t.call("POST", "/v1/schedules/batch", { schedules: items });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^schedules\[3\]: /);
    expect((await t.call("GET", "/v1/schedules/b-0")).status).toBe(404);
  });

  it("refuses an id that exists or appears twice; nothing is created", async () => {
    expect((await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "b-2" })).status).toBe(201);
    const exists = await t.call("POST", "/v1/schedules/batch", { schedules: many(4) });
    expect(exists.status).toBe(409);
    expect(exists.body).toEqual({ code: "ALREADY_EXISTS", message: "schedules[2]: schedule b-2 already exists" });
    expect((await t.call("GET", "/v1/schedules/b-0")).status).toBe(404);
    const twice = await t.call("POST", "/v1/schedules/batch", { schedules: [...many(2, "c"), ...many(1, "c")] });
    expect(twice.status).toBe(400);
    expect(twice.body.message).toBe("schedules[2]: schedule_id c-0 appears twice");
    expect((await t.call("GET", "/v1/schedules/c-1")).status).toBe(404);
  });

  it("refuses an unknown workflow, an empty batch and more than 1000", async () => {
    const unknown = await t.call("POST", "/v1/schedules/batch", {
      schedules: [{ ...SEED_SCHEDULE, workflow: "Nope" }],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/^schedules\[0\]: /);
    expect((await t.call("POST", "/v1/schedules/batch", { schedules: [] })).status).toBe(400);
    expect((await t.call("POST", "/v1/schedules/batch", { schedules: many(1001) })).status).toBe(400);
    expect((await t.call("GET", "/v1/schedules")).body.schedules).toEqual([]);
  });
});
