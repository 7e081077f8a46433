/**
 * What a task costs when nothing asks for it (docs/benchmarks.md § Memory at S = 10,000
 * (issue 15)): the cancel signal is made on first use, yet a run that asks after the cancel or the
 * lost lease finds it aborted with the same reason; spans are skipped only while no OpenTelemetry
 * SDK and no context manager is registered (docs/operations.md § Tracing).
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskJson } from "../../src/domain/worker-protocol.js";
import { CancelledError, LeaseLostError } from "../../src/worker/errors.js";
import { TaskControl } from "../../src/worker/run-task.js";
import { tracingActive } from "../../src/worker/tracing-probe.js";

const task = (cancel: string | null) => ({ task_id: "t1", cancel_requested: cancel }) as TaskJson;
const control = (cancel: string | null = null) => new TaskControl(task(cancel), () => false);

describe("TaskControl's signal, made on first use", () => {
  it("is aborted by a cancel that comes after the run asked for it", () => {
    const c = control();
    const signal = c.signal;
    expect(signal.aborted).toBe(false);
    c.cancel("stop");
    expect(signal.reason).toBeInstanceOf(CancelledError);
    expect((signal.reason as Error).message).toContain("stop");
    expect(c.signal).toBe(signal);
  });

  it("is already aborted when the run asks after a cancel, a cancel leased with the task, or a lost lease", () => {
    const cancelled = control();
    cancelled.cancel("later");
    expect(cancelled.signal.reason).toBeInstanceOf(CancelledError);
    expect(control("at lease").signal.reason).toBeInstanceOf(CancelledError);
    const lost = control();
    lost.loseLease();
    lost.cancel("too late");
    expect(lost.cancelReason).toBeNull();
    expect(lost.signal.reason).toBeInstanceOf(LeaseLostError);
  });

  it("keeps the first reason: a lease lost after the cancel does not change it", () => {
    const c = control();
    c.cancel("first");
    c.loseLease();
    expect(c.signal.reason).toBeInstanceOf(CancelledError);
    expect(c.leaseLost).toBe(true);
  });
});

describe("tracingActive", () => {
  afterEach(() => {
    trace.disable();
    context.disable();
  });

  it("is false with nothing registered, true with a tracer provider or a context manager", () => {
    expect(tracingActive()).toBe(false);
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    expect(tracingActive()).toBe(true);
    context.disable();
    expect(tracingActive()).toBe(false);
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    expect(tracingActive()).toBe(true);
  });
});
