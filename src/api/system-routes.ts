/** Health, readiness, metrics and the OpenAPI document (docs/api.md § Other). */
import type { JsonObject } from "../domain/json.js";
import { SharedRuns } from "../domain/shared-run.js";
import { runDoctor } from "../scheduler/doctor.js";
import { type ApiDeps, visibleTo } from "./deps.js";
import type { RouteDef } from "./route.js";
import * as S from "./schemas.js";

export function systemRoutes(d: ApiDeps, openapi: () => object): RouteDef[] {
  // One doctor run at a time per caller, its report shared by the requests that come while it runs
  // (never reused after: a doctor right after a fix must see it): a run reads every schedule (67 ms
  // at 5,000 on PostgreSQL), and 30 clients pipelining it stalled the server until a per-second
  // schedule missed occurrences (a tester).
  const doctors = new SharedRuns<JsonObject>();
  return [
    {
      method: "GET",
      url: "/healthz",
      summary: "Liveness: the process answers",
      tag: "system",
      public: true,
      responses: { 200: { description: "alive", schema: S.Health } },
      handler: async () => ({ status: 200, body: { status: "ok" } }),
    },
    {
      method: "GET",
      url: "/readyz",
      summary: "Readiness: the database answers and the scheduler runs; 503 otherwise",
      tag: "system",
      public: true,
      responses: {
        200: { description: "ready", schema: S.Ready },
        503: { description: "not ready", schema: S.Ready },
      },
      handler: async () => {
        const r = await d.readiness();
        return {
          status: r.ready ? 200 : 503,
          body: { status: r.ready ? "ready" : "not_ready", role: r.role, ...(r.message ? { message: r.message } : {}) },
        };
      },
    },
    {
      method: "GET",
      url: "/v1/doctor",
      summary: "The server's checks for `orbit doctor`: database, migrations, clock skew, workers, overdue schedules",
      tag: "system",
      responses: { 200: { description: "each check: ok, warn or fail, with a fix", schema: S.DoctorReport } },
      guard: (r) => d.access?.requireClient(r),
      handler: async (r) => {
        const visible = visibleTo(d.access, r, "schedule");
        const s = d.scheduler;
        const workers = d.executions.workers;
        const report = await doctors.run(r.caller?.name ?? "", async () => {
          const checks = await runDoctor(s.schedules.o.store, s.clock, visible, s.dueNow, s.graceMs, (live) =>
            workers.stuck(live),
          );
          return checks as unknown as JsonObject;
        });
        return { status: 200, body: report };
      },
    },
    {
      method: "GET",
      url: "/metrics",
      summary: "Prometheus metrics of this server",
      tag: "system",
      public: true,
      responses: { 200: { description: "Prometheus text format", contentType: "text/plain" } },
      handler: async () => ({
        status: 200,
        body: await d.metrics.text(d.scheduler.loop.fireWaitingMs()),
        headers: { "content-type": d.metrics.contentType },
      }),
    },
    {
      method: "GET",
      url: "/v1/openapi.json",
      summary: "This document",
      tag: "system",
      public: true,
      responses: { 200: { description: "OpenAPI 3.1", contentType: "application/json" } },
      handler: async () => ({ status: 200, body: openapi() }),
    },
  ];
}
