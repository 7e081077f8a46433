/**
 * OpenTelemetry tracing (docs/operations.md § Tracing): with an SDK registered, one trace per
 * execution runs from the fire that started it through its lease, the worker's run and steps, to
 * its end, across the HTTP hop to the worker; without one, nothing is stored.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, OrbitClient, Worker } from "../../src/index.js";
import { startServer } from "../../src/server/server.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const quiet = { info: () => undefined, warn: () => undefined, error: console.error };
const T0 = Date.parse("2026-11-15T06:59:00Z");

/** A server with a per-minute schedule, a worker that runs it, one fire; the execution once it ended. */
async function fireOnce(dir: string) {
  const clock = new ManualClock(T0);
  const server = await startServer({ port: 0, dataDir: dir, logger: "silent", clock });
  const Report = defineWorkflow<{ team: string }>({
    name: "TracedReport",
    version: "1.0.0",
    async run(ctx, input) {
      const rows = await ctx.step("query", async () => 42);
      await ctx.step("send", async () => "sent");
      return { team: input.team, rows };
    },
  });
  const client = new OrbitClient({ baseUrl: server.url });
  await client.registerWorkflow({ name: Report.name, version: Report.version });
  await client.createSchedule({
    schedule_id: "traced",
    workflow: "TracedReport",
    cron: "* * * * *",
    input: { team: "ops" },
  });
  const worker = new Worker({ server: server.url, workflows: [Report], logger: quiet });
  const working = worker.run();
  clock.set(T0 + 60_000);
  const id = "traced:2026-11-15T07:00:00Z";
  let execution = await client.getExecution(id).catch(() => null);
  while (execution?.status !== "COMPLETED") {
    await new Promise((resolve) => setImmediate(resolve));
    execution = await client.getExecution(id).catch(() => null);
  }
  await worker.close();
  await working;
  await server.close();
  return id;
}

async function storedTraceparent(dir: string, id: string): Promise<string | null> {
  const store = new SqliteStore({ dataDir: dir });
  await store.open();
  const e = await store.getExecution(id);
  await store.close();
  return e?.traceParent ?? null;
}

describe("tracing", () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), "orbit-trace-"));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("stores no trace context when no OpenTelemetry SDK is registered", async () => {
    const d = dir();
    const id = await fireOnce(d);
    expect(await storedTraceparent(d, id)).toBeNull();
  });

  it("follows one execution from its fire to its end, through the worker's run and steps", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    trace.setGlobalTracerProvider(provider);
    try {
      const d = dir();
      const id = await fireOnce(d);
      await provider.forceFlush();
      const spans = exporter.getFinishedSpans();
      const of = (name: string) => spans.filter((s) => s.name === name);
      const one = (name: string): ReadableSpan => {
        const found = of(name).filter(
          (s) => s.name === "orbit.fire" || s.name === "orbit.step" || s.attributes["orbit.execution_id"] === id,
        );
        expect(found.length, name).toBeGreaterThanOrEqual(1);
        return found[0] as ReadableSpan;
      };
      const start = one("orbit.execution.start");
      const traceId = start.spanContext().traceId;
      const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
      // The fire that started it is its parent.
      const fire = of("orbit.fire").find((s) => s.spanContext().spanId === parentOf(start));
      expect(fire?.attributes["orbit.schedules_fired"]).toBe(1);
      expect(start.attributes).toMatchObject({ "orbit.workflow": "TracedReport", "orbit.schedule_id": "traced" });
      // The stored traceparent names the creation span.
      expect(await storedTraceparent(d, id)).toBe(`00-${traceId}-${start.spanContext().spanId}-01`);
      // Lease and end on the server, the run in the worker: children of the creation span.
      for (const name of ["orbit.task.lease", "orbit.workflow.run", "orbit.execution.end"]) {
        const s = one(name);
        expect(s.spanContext().traceId, name).toBe(traceId);
        expect(parentOf(s), name).toBe(start.spanContext().spanId);
      }
      expect(one("orbit.execution.end").attributes["orbit.status"]).toBe("COMPLETED");
      // The steps are children of the run.
      const run = one("orbit.workflow.run");
      const steps = of("orbit.step").filter((s) => parentOf(s) === run.spanContext().spanId);
      expect(steps.map((s) => s.attributes["orbit.step"])).toEqual(["query", "send"]);
    } finally {
      trace.disable();
      context.disable();
      await provider.shutdown();
    }
  });
});
