/**
 * Code changed under the same version (docs/workflows.md § Determinism): journaled results are found
 * by step name, so a step renamed by a deploy mid-execution ran again under its new name and the
 * execution ended COMPLETED without a word (a card charged under `charge`, then under
 * `charge-card`; a tester). The worker says what it can see: journaled steps the code never
 * reached by the end of its run, and a journaled step reached out of its journaled order.
 */
import { describe, expect, it } from "vitest";
import type { StepJson } from "../../src/domain/worker-protocol.js";
import type { ProtocolClient } from "../../src/worker/protocol-client.js";
import { runTask, TaskControl } from "../../src/worker/run-task.js";
import { defineWorkflow, type WorkflowContext } from "../../src/worker/workflow.js";
import { taskJson } from "./hung-code.js";

/** A lease of execution pay-1 (Pay@1.0.0, attempt 2) whose earlier attempt journaled `names`, in this order. */
function leaseAfter(names: string[]): TaskControl {
  const steps: StepJson[] = names.map((name, i) => ({
    name,
    seq: i + 1,
    result: `${name}-result`,
    compensable: false,
    compensated: false,
  }));
  return new TaskControl(
    taskJson({ execution_id: "pay-1", workflow: "Pay", version: "1.0.0", attempt: 2, steps }),
    () => false,
  );
}

/** Runs `code` as Pay@1.0.0 on that lease; the warnings about the journal, the steps whose function ran, the reports. */
async function replay(
  journaled: string[],
  code: (ctx: WorkflowContext, ran: (name: string) => string) => Promise<unknown>,
  answer: object = { cancel_requested: null, status: "COMPLETED" },
) {
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const log = {
    info: () => undefined,
    // Only the lines about the journal ("attempt failed; the server retries it" is said too).
    warn: (message: string, fields?: Record<string, unknown>) => {
      if (message.includes("journaled")) warnings.push({ message, fields });
    },
    error: () => undefined,
  };
  const reports: string[] = [];
  const api = new Proxy({} as ProtocolClient, {
    get: (_t, what: string) => async () => {
      reports.push(what);
      return what === "complete" ? null : answer;
    },
  });
  const ran: string[] = [];
  const def = defineWorkflow({
    name: "Pay",
    version: "1.0.0",
    run: (ctx) =>
      code(ctx, (name) => {
        ran.push(name);
        return `${name}-fresh`;
      }),
  });
  await runTask(def, leaseAfter(journaled), api, log);
  return { warnings, ran, reports };
}

describe("journaled steps the code never reached", () => {
  it("are said when the run returns: a step renamed under the same version runs again", async () => {
    const { warnings, ran, reports } = await replay(["charge"], async (ctx, ran) => {
      await ctx.step("charge-card", () => ran("charge-card"));
      return "done";
    });
    // The side effect ran a second time: nothing in the journal says the two names are one step.
    expect(ran).toEqual(["charge-card"]);
    expect(reports).toEqual(["step", "complete"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toBe(
      "execution pay-1 of Pay@1.0.0 returned its result without reaching step \"charge\" that its run journaled: the workflow's code changed under the same version (a step renamed or taken out), or does not run the same steps on a replay. Journaled results are found by step name: bump the workflow's version when its steps change",
    );
    expect(warnings[0]?.fields).toMatchObject({ execution_id: "pay-1", version: "1.0.0", steps: ["charge"] });
  });

  it("are said when the run continues as new, or fails for good, not when it fails for a retry", async () => {
    const continued = await replay(["a", "b"], async (ctx) => {
      await ctx.step("a", () => 1);
      ctx.continueAsNew({});
    });
    expect(continued.warnings.map((w) => w.fields?.steps)).toEqual([["b"]]);
    expect(continued.warnings[0]?.message).toMatch(
      /^execution pay-1 of Pay@1\.0\.0 continued as new without reaching step "b"/,
    );
    const failing = async (ctx: WorkflowContext) => {
      await ctx.step("a", () => 1);
      throw new Error("down");
    };
    const retried = await replay(["a", "b"], failing, { status: "RUNNING" });
    expect(retried.warnings).toEqual([]);
    const failed = await replay(["a", "b"], failing, { status: "FAILED" });
    expect(failed.warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^execution pay-1 of Pay@1\.0\.0 failed for good without reaching step "b"/),
    ]);
  });

  it("are not said when the code reaches every journaled step, with new steps after them", async () => {
    const { warnings, ran } = await replay(["a", "b"], async (ctx, ran) => {
      const a = await ctx.step("a", () => ran("a"));
      const b = await ctx.step("b", () => ran("b"));
      return [a, b, await ctx.step("c", () => ran("c"))];
    });
    expect(ran).toEqual(["c"]);
    expect(warnings).toEqual([]);
  });
});

describe("a journaled step reached out of its journaled order", () => {
  it("is said once, naming the step the journal has first", async () => {
    const { warnings, ran } = await replay(["charge", "email", "ship"], async (ctx, ran) => {
      await ctx.step("email", () => ran("email"));
      await ctx.step("charge", () => ran("charge"));
      await ctx.step("ship", () => ran("ship"));
    });
    expect(ran).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toBe(
      'execution pay-1 of Pay@1.0.0 reached step "email" before step "charge", which its run journaled first: the workflow\'s code changed under the same version, or does not run the same steps in the same order on a replay. Journaled results are found by step name: bump the workflow\'s version when its steps change',
    );
    expect(warnings[0]?.fields).toMatchObject({
      execution_id: "pay-1",
      version: "1.0.0",
      step: "email",
      expected: "charge",
      journaled: ["charge", "email", "ship"],
    });
  });

  it("is said when a journaled step was taken out from between two others", async () => {
    const { warnings } = await replay(["a", "b", "c"], async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.step("c", () => 3);
    });
    expect(warnings.map((w) => w.message.slice(0, 62))).toEqual([
      'execution pay-1 of Pay@1.0.0 reached step "c" before step "b",',
      "execution pay-1 of Pay@1.0.0 returned its result without reach",
    ]);
  });

  it("is not compared for steps in flight together, which are journaled in the order they finished", async () => {
    // b and c ran together; c finished first. Two chains of steps ran side by side likewise.
    const together = await replay(["a", "c", "b", "d"], async (ctx) => {
      await ctx.step("a", () => 1);
      await Promise.all([ctx.step("b", () => 2), ctx.step("c", () => 3)]);
      await ctx.step("d", () => 4);
    });
    expect(together.warnings).toEqual([]);
    const chains = await replay(["x1", "x2", "y1", "y2"], async (ctx) => {
      const chain = async (p: string) => {
        await ctx.step(`${p}1`, () => 1);
        await ctx.step(`${p}2`, () => 2);
      };
      await Promise.all([chain("x"), chain("y")]);
    });
    expect(chains.warnings).toEqual([]);
  });

  it("cannot see a step inserted before journaled ones: it runs, and nothing is said", async () => {
    // Not told from a step that failed in an earlier attempt and was caught (its failure is not
    // journaled): docs/workflows.md § Determinism says what is not checked.
    const { warnings, ran } = await replay(["a", "b"], async (ctx, ran) => {
      await ctx.step("a", () => ran("a"));
      await ctx.step("inserted", () => ran("inserted"));
      await ctx.step("b", () => ran("b"));
    });
    expect(ran).toEqual(["inserted"]);
    expect(warnings).toEqual([]);
  });
});
