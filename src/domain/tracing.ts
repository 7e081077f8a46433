/**
 * OpenTelemetry tracing (docs/operations.md § Tracing). Orbit uses only `@opentelemetry/api`,
 * which does nothing until the application registers an SDK (a tracer provider, and a context
 * manager for spans to nest across `await`), so a server without one pays for no more than a
 * few no-op calls.
 *
 * One trace per execution: its creation span (`orbit.execution.start`, a child of the fire or of
 * whatever span was active when it was started) is stored with the execution as a W3C
 * `traceparent` string, and every later span of the execution — the lease, the worker's run and
 * its steps, the completion — is its child, on the server or in the worker's process: the
 * traceparent travels to the worker with the task.
 */
import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import { VERSION } from "../version.js";
import { isInstance, thrownText } from "./error-text.js";

let current: { provider: TracerProvider; tracer: Tracer } | null = null;

/**
 * Orbit's tracer, from the tracer provider registered now. Not one taken at load: that one kept the
 * provider it first delegated to after `trace.disable()` (an SDK shut down, a test's provider), and
 * went on recording into it (a test file's provider made a later file's executions carry traces).
 */
export function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (current?.provider !== provider) current = { provider, tracer: provider.getTracer("orbit-scheduler", VERSION) };
  return current.tracer;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span's context as a W3C traceparent, or null when nothing records (no SDK registered). */
export function traceparentOf(span: Span): string | null {
  const c = span.spanContext();
  if (!trace.isSpanContextValid(c)) return null;
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & TraceFlags.SAMPLED ? 1 : 0).toString(16).padStart(2, "0")}`;
}

/** A context whose parent is the remote span a traceparent names (the root context if it names none). */
export function contextFrom(traceparent: string | null | undefined): Context {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (m === null) return context.active();
  return trace.setSpanContext(context.active(), {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16),
    isRemote: true,
  });
}

/** A span that starts and ends now, as the child of a stored traceparent (a lease, a completion). */
export function markSpan(name: string, traceparent: string | null | undefined, attributes: Attributes): void {
  if (!traceparent) return;
  tracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes }, contextFrom(traceparent)).end();
}

/**
 * Runs `fn` inside a span (child of `parent`, or of the active span), ending it when `fn` settles
 * and recording a thrown error on it.
 */
export async function inSpan<T>(
  name: string,
  options: { attributes?: Attributes; parent?: Context; kind?: SpanKind },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    options.parent ?? context.active(),
  );
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => fn(span));
  } catch (err) {
    const message = thrownText(err); // never throws, whatever was thrown (a revoked Proxy)
    span.recordException(isInstance(err, Error) ? err : message);
    span.setStatus({ code: SpanStatusCode.ERROR, message });
    throw err;
  } finally {
    span.end();
  }
}
