import { expect, it } from "vitest";
import type { JsonObject } from "../../src/domain/json.js";
import { checkOfferedWorkflows, checkWorkflowRef, Workflows } from "../../src/engine/workflows.js";
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

  it("refuses build metadata saying so, on register, start and poll alike", async () => {
    // Valid semver, but its order ignores +…: "latest" could not tell 1.0.0+build.5 from 1.0.0. It
    // was refused as "not a semver version" (a tester).
    const error = await refusal(workflows().register({ name: "SemverT", version: "1.0.0+build.5" }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toBe(
      'version "1.0.0+build.5" of workflow SemverT has build metadata (+build.5), which Orbit does not accept: semver\'s order ignores it, so 1.0.0+build.5 would tie with 1.0.0 for the latest: register 1.0.0, or a higher version',
    );
    const pre = await refusal(workflows().register({ name: "W", version: "2.0.0-rc.1+sha.abc" }));
    expect(pre.message).toContain("has build metadata (+sha.abc)");
    expect(pre.message).toContain(": register 2.0.0-rc.1, or a higher version");
    // Not semver at all, + or not, is said as before.
    const bad = await refusal(workflows().register({ name: "W", version: "1.0+b" }));
    expect(bad.message).toBe('version "1.0+b" of workflow W is not a semver version (MAJOR.MINOR.PATCH, e.g. 1.0.0)');
    expect(() => checkWorkflowRef("W", "1.0.0+b")).toThrow(
      'version "1.0.0+b" has build metadata (+b), which Orbit does not accept: semver\'s order ignores it, so 1.0.0+b would tie with 1.0.0 for the latest: give a registered version, or leave version out for the latest',
    );
    expect(() => checkOfferedWorkflows([{ name: "W", version: "1.0.0+b" }])).toThrow(
      'workflows[0]: version "1.0.0+b" of W has build metadata (+b), which Orbit does not accept',
    );
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

  it("refuses a schema whose checks of one value never end or multiply, keeps recursive data schemas", async () => {
    const refused = async (input_schema: JsonObject) =>
      (await refusal(workflows().register({ name: "W", version: "1.0.0", input_schema }))).message;
    const never =
      /^input_schema of W@1\.0\.0: it refers back to itself without going into the input .* so checking any input would never end$/;
    expect(await refused({ $ref: "#" })).toMatch(never);
    expect(
      await refused({ $ref: "#/$defs/a", $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } } }),
    ).toMatch(never);
    expect(await refused({ properties: { x: { anyOf: [{ $ref: "#/properties/x" }] } } })).toMatch(never);
    expect(await refused({ $defs: { a: { $anchor: "top", not: { $ref: "#top" } } } })).toMatch(never);
    expect(await refused({ $id: "https://example.com/s", $ref: "https://example.com/s" })).toMatch(never);
    expect(await refused({ $dynamicAnchor: "a", allOf: [{ $dynamicRef: "#a" }] })).toMatch(never);
    // Thirty levels of "either of two references to the next": 2^30 checks of one value.
    const $defs: JsonObject = { d30: { type: "string" } };
    for (let i = 0; i < 30; i++)
      $defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    expect(await refused({ $ref: "#/$defs/d0", $defs })).toBe(
      "input_schema of W@1.0.0: it combines its subschemas (allOf, anyOf, oneOf, $ref, …) into more than 10,000 checks of one value of the input; write it with fewer alternatives",
    );
    // The same chain through subschemas with their own $id, or kept under `examples`.
    const ids: JsonObject = { d22: { $id: "https://x.example/d22", type: "string" } };
    for (let i = 0; i < 22; i++) {
      const next = `https://x.example/d${i + 1}`;
      ids[`d${i}`] = { $id: `https://x.example/d${i}`, anyOf: [{ $ref: next }, { $ref: next }] };
    }
    expect(await refused({ $ref: "https://x.example/d0", $defs: ids })).toMatch(/more than 10,000 checks/);
    const examples: JsonObject[] = [{ type: "object", properties: { y: { $ref: "#/examples/1" } } }];
    for (let i = 1; i <= 20; i++)
      examples.push({ anyOf: [{ $ref: `#/examples/${i + 1}` }, { $ref: `#/examples/${i + 1}` }] });
    examples.push({ type: "string" });
    expect(await refused({ $ref: "#/examples/0", examples })).toMatch(/more than 10,000 checks/);
    // Draft 2019's $recursiveRef, and a reference to a document the schema does not hold.
    expect(await refused({ $recursiveRef: "#" })).toMatch(never);
    expect(await refused({ $ref: "other.json#/x" })).toBe(
      'input_schema of W@1.0.0: its reference "other.json#/x" does not point into the schema itself: an input schema is one document, so refer to its own $defs',
    );
    expect(await db.store.listWorkflows()).toEqual([]);
    // Recursion that goes into the input (a tree), and a reference shared by many places, are fine.
    const tree: JsonObject = {
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#" } }, left: { $ref: "#/$defs/node" } },
      $defs: { node: { anyOf: [{ type: "null" }, { $ref: "#" }] } },
    };
    await workflows().register({ name: "Tree", version: "1.0.0", input_schema: tree });
    const deep = { children: [{ left: { children: [{ left: null }] } }] };
    expect(await workflows().validateInput((await db.store.getWorkflow("Tree", "1.0.0"))!, deep)).toEqual(deep);
    const shared: JsonObject = {
      type: "object",
      properties: Object.fromEntries([...Array(200)].map((_, i) => [`p${i}`, { $ref: "#/$defs/s" }])),
      $defs: { s: { anyOf: [{ type: "string" }, { type: "number" }] } },
    };
    await workflows().register({ name: "Shared", version: "1.0.0", input_schema: shared });
  });

  it("uniqueItems compares items as JSON Schema does, each item written once", async () => {
    const many = (n: number) => [...Array(n)].map((_, i) => ({ k: i }));
    await workflows().register({
      name: "Tags",
      version: "1.0.0",
      input_schema: { type: "object", properties: { tags: { type: "array", uniqueItems: true } } },
    });
    const tags = (await db.store.getWorkflow("Tags", "1.0.0"))!;
    const check = (value: unknown[]) => workflows().validateInput(tags, { tags: value as JsonObject[] });
    // Equal objects whatever their keys' order, and 1 and 1.0, are duplicates; 1 and "1" are not.
    expect(
      (
        await refusal(
          Promise.resolve().then(() =>
            check([
              { a: 1, b: [2] },
              { b: [2.0], a: 1.0 },
            ]),
          ),
        )
      ).message,
    ).toBe("input does not match Tags@1.0.0: /tags must NOT have duplicate items (items ## 0 and 1 are identical)");
    expect(check([1, "1", [1], { "1": 1 }, null, false, 0])).toEqual({
      tags: [1, "1", [1], { "1": 1 }, null, false, 0],
    });
    // Ajv's own keyword compared every pair of object items (40,000 held a server 19 s); this one
    // writes each once (docs/security.md § Input schemas): 18 s for this array with Ajv's here, 0.1 s now.
    expect(check(many(40_000)).tags).toHaveLength(40_000);
  });

  it("a large enum is checked by lookup and named in a short message, whatever the input refuses", async () => {
    const values = [...Array(10_000)].map((_, i) => ({ k: i }));
    await workflows().register({
      name: "Codes",
      version: "1.0.0",
      input_schema: { type: "object", properties: { codes: { type: "array", items: { enum: values } } } },
    });
    const codes = (await db.store.getWorkflow("Codes", "1.0.0"))!;
    const check = (items: unknown[]) => workflows().validateInput(codes, { codes: items as JsonObject[] });
    // Equal objects whatever their keys' order are allowed; 1.0 is 1.
    expect(check([{ k: 5 }, { k: 9999.0 }])).toEqual({ codes: [{ k: 5 }, { k: 9999 }] });
    // 3,000 refused items: each error spelled out all 10,000 values (30,000 ran the server out of
    // memory). An input this large is told its first problem only (docs/security.md § Input schemas).
    const refused = await refusal(Promise.resolve().then(() => check([...Array(3000)].map((_, i) => ({ k: -i - 1 })))));
    expect(refused.message).toMatch(
      /^input does not match Codes@1\.0\.0: \/codes\/0 must be one of \{"k":0\}, \{"k":1\}, .*\{"k":9\}, … \(10000 values\)$/,
    );
    // A small one, every problem (up to five listed).
    const few = await refusal(Promise.resolve().then(() => check([{ k: -1 }, { k: -2 }])));
    expect(few.message).toMatch(/\/codes\/0 must be one of .*; \/codes\/1 must be one of /);
    expect(refused.message.length).toBeLessThan(2000);
  });

  it("an input deeper than its schema checks in bounded time is refused; tree schemas take any depth", async () => {
    // Two alternatives that each go into the same part of the input: checks double with each level
    // (1.3 s at 24 levels, a day at 40).
    const doubling: JsonObject = {
      $defs: {
        n: {
          type: "object",
          allOf: [{ properties: { a: { $ref: "#/$defs/n" } } }, { properties: { a: { $ref: "#/$defs/n" } } }],
        },
      },
      $ref: "#/$defs/n",
    };
    const tree: JsonObject = {
      type: "object",
      properties: { a: { $ref: "#" }, kids: { type: "array", items: { $ref: "#" } } },
    };
    await workflows().register({ name: "Doubling", version: "1.0.0", input_schema: doubling });
    await workflows().register({ name: "Tree", version: "1.0.0", input_schema: tree });
    const nest = (levels: number): JsonObject => (levels === 1 ? {} : { a: nest(levels - 1) });
    const doublingWf = (await db.store.getWorkflow("Doubling", "1.0.0"))!;
    const treeWf = (await db.store.getWorkflow("Tree", "1.0.0"))!;
    expect(workflows().validateInput(doublingWf, nest(10))).toEqual(nest(10));
    const deep = await refusal(Promise.resolve().then(() => workflows().validateInput(doublingWf, nest(40))));
    expect(deep.message).toMatch(
      /^input is nested 40 levels deep, and Doubling@1\.0\.0's input_schema checks at most 2\d: its alternatives that apply to the same part of the input multiply/,
    );
    // A tree's checks grow with its size, not twice per level: the limits' 60 levels pass.
    expect(workflows().validateInput(treeWf, nest(60))).toEqual(nest(60));
  });

  it("a start whose pattern tests would pass their budget is refused naming the pattern; too many patterns are refused", async () => {
    // Two repetitions of \\p{L} on the backtracking engine (the lookahead keeps it off RE2): a name
    // of 100,000 letters could take 10^10 steps. The start is refused before the test runs; a
    // short name passes.
    await workflows().register({
      name: "Named",
      version: "1.0.0",
      input_schema: { type: "object", patternProperties: { "^(?=\\p{L})\\p{L}+ \\p{L}+$": { type: "integer" } } },
    });
    const named = (await db.store.getWorkflow("Named", "1.0.0"))!;
    expect(workflows().validateInput(named, { "Zoë Müller": 1 })).toEqual({ "Zoë Müller": 1 });
    const refused = await refusal(
      Promise.resolve().then(() => workflows().validateInput(named, { [`${"a".repeat(100_000)} b`]: 1 })),
    );
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toMatch(
      /^input takes more pattern matching than one check may do \(524,288,000 steps, about a second\): Named@1\.0\.0's input_schema tests pattern "\^\(\?=\\\\p\{L\}\)\\\\p\{L\}\+ \\\\p\{L\}\+\$" on too many or too long strings/,
    );
    // 1,001 patterns in one schema are refused when it is registered (2,000 took 2.2 s to compile).
    const many = Object.fromEntries([...Array(1001)].map((_, i) => [`^x${i}$`, { type: "string" }]));
    const registered = await refusal(
      workflows().register({
        name: "Named",
        version: "2.0.0",
        input_schema: { type: "object", patternProperties: many },
      }),
    );
    expect(registered.message).toMatch(
      /^input_schema of Named@2\.0\.0: it has 1,001 patterns \(pattern and patternProperties\), and a schema may have at most 1,000/,
    );
    expect(await db.store.getWorkflow("Named", "2.0.0")).toBeNull();
  });

  it("a stored schema whose checks never end refuses the start, naming why, instead of failing inside", async () => {
    // A version registered before the check (its checks overflowed the stack at every start): stored directly.
    await db.store.insertWorkflow({
      name: "Loop",
      version: "1.0.0",
      inputSchema: { $ref: "#" },
      description: null,
      createdMs: clock.now(),
      deprecatedMs: null,
    });
    const stored = (await db.store.getWorkflow("Loop", "1.0.0"))!;
    const refused = await refusal(Promise.resolve().then(() => workflows().validateInput(stored, { a: 1 })));
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toMatch(/^input_schema of Loop@1\.0\.0: it refers back to itself/);
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
    expect((await refusal(w.resolve("W", "9.9.9"))).message).toBe(
      "workflow W@9.9.9 is not registered: start a worker that runs this version (a worker registers its workflows), or orbit workflow register W@9.9.9",
    );
    // The form lists print, pasted back as a name: told to give the two apart.
    expect((await refusal(w.resolve("W@1.2.3", null))).message).toBe(
      'workflow W@1.2.3 is not registered: give the name and the version apart (workflow "W", version "1.2.3"; on the CLI --workflow W --version 1.2.3)',
    );
  });

  it("names the registered workflow nearest an unregistered name: case aside, or a few letters off", async () => {
    // `Orderprocessing` beside a worker's `OrderProcessing@1.0.0` was told only to start a worker (a tester).
    const w = workflows();
    await w.register({ name: "OrderProcessing", version: "1.0.0" });
    await w.register({ name: "Report", version: "1.0.0" });
    const start =
      "start a worker that runs it (a worker registers its workflows), or orbit workflow register Orderprocessing@<version>";
    const cased = await refusal(w.resolve("Orderprocessing", null));
    expect(cased.code).toBe("NOT_FOUND");
    expect(cased.message).toBe(`workflow Orderprocessing is not registered: ${start}; did you mean OrderProcessing?`);
    expect((await refusal(w.get("OrderProcesing"))).message).toMatch(/; did you mean OrderProcessing\?$/);
    // A pinned version of a misspelled name too; a missing version of a registered name is not a typo.
    expect((await refusal(w.resolve("orderprocessing", "1.0.0"))).message).toMatch(
      /register orderprocessing@1\.0\.0; did you mean OrderProcessing\?$/,
    );
    expect((await refusal(w.resolve("OrderProcessing", "2.0.0"))).message).not.toContain("did you mean");
    // Nothing near: as before. Inside a transaction (a fire batch) too.
    expect((await refusal(w.resolve("Invoices", null))).message).not.toContain("did you mean");
    await db.store.transaction(async (tx) => {
      expect((await refusal(w.resolve("Reprt", null, tx))).message).toMatch(/; did you mean Report\?$/);
      expect((await refusal(w.resolve("reprot", null, tx))).message).toMatch(/; did you mean Report\?$/);
    });
    // A server with identities names none: it could be a workflow the caller may not see.
    const guarded = new Workflows({ store: db.store, clock, nearNames: false });
    expect((await refusal(guarded.resolve("Orderprocessing", null))).message).toBe(
      `workflow Orderprocessing is not registered: ${start}`,
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
