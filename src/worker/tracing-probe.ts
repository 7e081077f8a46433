/**
 * Whether spans would do anything in this process (docs/operations.md § Tracing): an OpenTelemetry
 * SDK registered a tracer provider, or a context manager carries spans across `await` (a handler
 * may read the active span to pass the trace on). Asked per task, so an SDK registered after the
 * worker started is seen.
 */
import { context, createContextKey, ProxyTracerProvider, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { VERSION } from "../version.js";

const PROBE = ROOT_CONTEXT.setValue(createContextKey("orbit.tracing-probe"), true);

export function tracingActive(): boolean {
  const provider = trace.getTracerProvider();
  // Another copy of @opentelemetry/api registered it, or a provider is set: trace.
  if (!(provider instanceof ProxyTracerProvider)) return true;
  if (provider.getDelegateTracer("orbit-scheduler", VERSION) !== undefined) return true;
  // Without a context manager, context.with runs the function in the root context.
  return context.with(PROBE, () => context.active() === PROBE);
}
