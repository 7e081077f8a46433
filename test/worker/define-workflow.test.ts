/**
 * defineWorkflow refuses a definition it could never run, at once and by name: a bad name or
 * version, a retry policy out of range, and a missing `run` (plain JavaScript that passes the
 * handler beside the definition got "def.run is not a function" on every task instead).
 */
import { describe, expect, it } from "vitest";
import { defineWorkflow } from "../../src/worker/workflow.js";

describe("defineWorkflow", () => {
  const run = async () => ({});

  it("accepts a whole definition", () => {
    expect(defineWorkflow({ name: "Flaky", version: "1.0.0", run }).name).toBe("Flaky");
  });

  it("refuses a definition without its run function, naming the workflow", () => {
    const loose = { name: "Flaky", version: "1.0.0" } as unknown as Parameters<typeof defineWorkflow>[0];
    expect(() => defineWorkflow(loose)).toThrow(/^workflow Flaky: run must be the workflow's function/);
  });

  it("refuses a bad name, version or retry policy", () => {
    expect(() => defineWorkflow({ name: "", version: "1.0.0", run })).toThrow(/workflow name "" must be/);
    expect(() => defineWorkflow({ name: "W", version: "1.0", run })).toThrow(/version "1.0" is not semver/);
    expect(() => defineWorkflow({ name: "W", version: "1.0.0", run, retry: { maxAttempts: 0, backoffMs: 0 } })).toThrow(
      /retry needs maxAttempts >= 1/,
    );
  });
});
