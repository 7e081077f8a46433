/**
 * Orbit's spans go to the tracer provider registered now (src/domain/tracing.ts tracer()): a tracer
 * taken at load kept delegating to the provider registered when it first made a span, after
 * `trace.disable()`, so a provider one test file registered and removed made a later file's
 * executions carry traces (the CI run of 6 December 2026).
 */
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { afterEach, expect, it } from "vitest";
import { tracer } from "../../src/domain/tracing.js";

afterEach(() => {
  trace.disable();
});

it("records into a provider while it is registered, and no longer once it is removed", () => {
  expect(tracer().startSpan("before").isRecording()).toBe(false);
  trace.setGlobalTracerProvider(new BasicTracerProvider());
  const during = tracer().startSpan("during");
  expect(during.isRecording()).toBe(true);
  during.end();
  trace.disable();
  expect(tracer().startSpan("after").isRecording()).toBe(false);
});
