import { expect, it } from "vitest";
import { Workflows } from "../../src/engine/workflows.js";
import { describeEachDialect, ManualClock, useStore } from "../helpers/db.js";
import { ORDER_SCHEMA, refusal } from "./fixtures.js";

describeEachDialect("workflows", (dialect) => {
  const db = useStore(dialect);
  const clock = new ManualClock();
  const workflows = () => new Workflows({ store: db.store, clock });

  it("registers (created), accepts an identical repeat (not created), refuses another schema (409)", async () => {
    const w = workflows();
    const first = await w.register({
      name: "OrderProcessing",
      version: "1.0.0",
      input_schema: ORDER_SCHEMA,
      description: "Orders",
    });
    expect(first.created).toBe(true);
    expect(first.workflow).toMatchObject({ name: "OrderProcessing", version: "1.0.0", createdMs: clock.now() });

    // Same schema with keys in another order is identical.
    const reordered = Object.fromEntries(Object.entries(ORDER_SCHEMA).reverse());
    const again = await w.register({ name: "OrderProcessing", version: "1.0.0", input_schema: reordered });
    expect(again.created).toBe(false);
    expect(again.workflow.description).toBe("Orders");

    const conflict = await refusal(
      w.register({ name: "OrderProcessing", version: "1.0.0", input_schema: { type: "object" } }),
    );
    expect(conflict.code).toBe("ALREADY_EXISTS");
    expect(conflict.message).toMatch(/OrderProcessing@1\.0\.0 is already registered with a different input_schema/);
    expect((await db.store.getWorkflow("OrderProcessing", "1.0.0"))?.inputSchema).toEqual(ORDER_SCHEMA);
  });

  it("refuses a version that is not semver, storing nothing", async () => {
    for (const version of ["1.0", "v1.0.0", "one", ""]) {
      const error = await refusal(workflows().register({ name: "W", version }));
      expect(error.code).toBe("INVALID_ARGUMENT");
      expect(error.message).toContain(`version ${JSON.stringify(version)} of workflow W is not a semver version`);
    }
    expect(await db.store.listWorkflows()).toEqual([]);
  });

  it("refuses an invalid JSON Schema with the reason, storing nothing", async () => {
    const unknownKeyword = await refusal(
      workflows().register({ name: "W", version: "1.0.0", input_schema: { type: "object", propertiez: {} } }),
    );
    expect(unknownKeyword.code).toBe("INVALID_ARGUMENT");
    expect(unknownKeyword.message).toMatch(
      /input_schema of W@1\.0\.0 is not a valid JSON Schema \(draft 2020-12\): .*propertiez/,
    );
    const badType = await refusal(
      workflows().register({ name: "W", version: "1.0.0", input_schema: { type: "objekt" } }),
    );
    // Where, what was given and what is allowed (Ajv's own text named none of them).
    expect(badType.message).toBe(
      'input_schema of W@1.0.0 is not a valid JSON Schema (draft 2020-12): /type: "objekt" is not one of array, boolean, integer, null, number, object, string',
    );
    // A $schema Ajv does not know is refused as before, not thrown past the refusal (a 500).
    const draft7 = await refusal(
      workflows().register({
        name: "W",
        version: "1.0.0",
        input_schema: { $schema: "http://json-schema.org/draft-07/schema#", type: "object" },
      }),
    );
    expect(draft7).toMatchObject({
      code: "INVALID_ARGUMENT",
      message:
        'input_schema of W@1.0.0 is not a valid JSON Schema (draft 2020-12): $schema "http://json-schema.org/draft-07/schema#" is not supported: input schemas are draft 2020-12 (leave $schema out, or give "https://json-schema.org/draft/2020-12/schema")',
    });
    const notObject = await refusal(
      workflows().register({ name: "W", version: "1.0.0", input_schema: ["x"] as unknown as Record<string, never> }),
    );
    expect(notObject.message).toMatch(/must be a JSON object/);
    // A schema no input could meet: inputs are objects (every start was refused).
    const listy = await refusal(workflows().register({ name: "W", version: "1.0.0", input_schema: { type: "array" } }));
    expect(listy.message).toBe(
      'input_schema of W@1.0.0: its root type is "array", and an input is always a JSON object: give the root type "object" (or none)',
    );
    expect(await db.store.listWorkflows()).toEqual([]);
  });

  it("refuses a bad name", async () => {
    const error = await refusal(workflows().register({ name: "bad name!", version: "1.0.0" }));
    expect(error.code).toBe("INVALID_ARGUMENT");
  });

  it("lists, gets all versions and picks the latest by semver, not by text or registration order", async () => {
    const w = workflows();
    for (const version of ["1.10.0", "1.9.0", "2.0.0-rc.2", "2.0.0-rc.10", "1.2.3"]) {
      await w.register({ name: "W", version });
      clock.advance(1000);
    }
    await w.register({ name: "A", version: "0.1.0" });
    expect((await w.get("W")).map((v) => v.version)).toEqual(["2.0.0-rc.10", "2.0.0-rc.2", "1.10.0", "1.9.0", "1.2.3"]);
    expect((await w.latest("W")).version).toBe("2.0.0-rc.10");
    await w.register({ name: "W", version: "2.0.0" });
    expect((await w.latest("W")).version).toBe("2.0.0");
    expect((await w.list()).map((v) => `${v.name}@${v.version}`)[0]).toBe("A@0.1.0");
    expect((await refusal(w.get("Nope"))).code).toBe("NOT_FOUND");
    expect((await refusal(w.resolve("W", "9.9.9"))).message).toBe("workflow W@9.9.9 is not registered");
    // The form lists print, pasted back as a name: told to give the two apart.
    expect((await refusal(w.resolve("W@1.2.3", null))).message).toBe(
      'workflow W@1.2.3 is not registered: give the name and the version apart (workflow "W", version "1.2.3"; on the CLI --workflow W --version 1.2.3)',
    );
  });

  it("validates input with defaults applied, naming the path and the rule", async () => {
    const w = workflows();
    const { workflow } = await w.register({ name: "OrderProcessing", version: "1.0.0", input_schema: ORDER_SCHEMA });
    const given = { order_id: "A-1", amount: 12.5 };
    expect(w.validateInput(workflow, given)).toEqual({
      order_id: "A-1",
      amount: 12.5,
      currency: "EUR",
      priority: "low",
    });
    expect(given).toEqual({ order_id: "A-1", amount: 12.5 }); // the caller's object is not changed

    const wrongType = (() => {
      try {
        w.validateInput(workflow, { order_id: "A-1", amount: "12" });
      } catch (e) {
        return e as { code: string; message: string };
      }
    })();
    expect(wrongType?.code).toBe("INVALID_ARGUMENT");
    expect(wrongType?.message).toBe("input does not match OrderProcessing@1.0.0: /amount must be number");
    expect(() => w.validateInput(workflow, { amount: 1 })).toThrow(
      "input does not match OrderProcessing@1.0.0: /order_id is required",
    );
    expect(() => w.validateInput(workflow, { order_id: "x", amount: 1, colour: "red" })).toThrow(
      "/colour is not allowed",
    );
    expect(() => w.validateInput(workflow, { order_id: "x", amount: 1, priority: "urgent" })).toThrow(
      '/priority must be one of "low", "high"',
    );
    expect(() => w.validateInput(workflow, { order_id: "x", amount: 1, email: "nope" })).toThrow(
      '/email must match format "email"',
    );
    expect(() => w.validateInput(workflow, [1, 2])).toThrow("input must be a JSON object, not an array");
  });
});
