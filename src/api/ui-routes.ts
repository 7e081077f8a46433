/**
 * Two reads the web UI needs (docs/api.md § Identity and preview): who the caller is and what it
 * may do (`GET /v1/me`), so the UI hides what would be refused; and the English description and
 * next fires of a timing being typed (`GET /v1/preview`), computed by the scheduler's own code.
 */
import { Type } from "@sinclair/typebox";
import { describeTiming } from "../time/describe.js";
import { formatInstant, parseInstant } from "../time/format.js";
import { compileTiming, refuseBlankTiming, refuseLongTiming } from "../time/schedule-timing.js";
import type { ApiDeps } from "./deps.js";
import type { RouteDef } from "./route.js";

const opt = (description: string) => Type.Optional(Type.String({ maxLength: 200, description }));

export const PreviewQuery = Type.Object(
  {
    // The timing's own texts are bounded as on create, with its refusals (refuseLongTiming).
    cron: Type.Optional(Type.String({ description: "cron expression" })),
    interval: Type.Optional(Type.String({ description: "interval such as 10s" })),
    timezone: Type.Optional(Type.String({ description: "IANA zone of the cron expression (default UTC)" })),
    dst: Type.Optional(Type.String({ description: "once (default), wall_clock or <gap>:<repeat>" })),
    start_at: opt("RFC 3339; intervals count from it"),
    end_at: opt("RFC 3339"),
    from: opt("RFC 3339 (default now)"),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "how many fires (default 5)" })),
  },
  { additionalProperties: false },
);

const Preview = Type.Object({
  description: Type.String({ description: 'the timing in English, e.g. "At 02:00, every day"' }),
  timezone: Type.Union([Type.String(), Type.Null()], {
    description: "the cron's IANA zone; null for an interval, which counts absolute time (as a schedule's `timezone`)",
  }),
  next_fire_times: Type.Array(Type.String()),
});

const Me = Type.Object({
  name: Type.Union([Type.String(), Type.Null()], { description: "null: the server is open (no --config)" }),
  kind: Type.String(),
  allow: Type.Array(Type.Object({ workflows: Type.Array(Type.String()), actions: Type.Array(Type.String()) }), {
    description: "workflow globs and the actions granted on them; on an open server everything",
  }),
});

export function uiRoutes(d: ApiDeps): RouteDef[] {
  return [
    {
      method: "GET",
      url: "/v1/me",
      summary: "The caller's identity and grants",
      tag: "system",
      responses: { 200: { description: "the identity", schema: Me } },
      handler: async (r) => {
        const open = {
          name: null,
          kind: "client",
          allow: [{ workflows: ["*"], actions: ["schedule", "start", "read", "cancel"] }],
        };
        return { status: 200, body: d.access?.describe?.(r) ?? open };
      },
    },
    {
      method: "GET",
      url: "/v1/preview",
      summary: "Describe a timing and list its next fires (nothing is stored)",
      tag: "schedules",
      query: PreviewQuery,
      responses: { 200: { description: "the preview", schema: Preview } },
      handler: async (r) => {
        const q = r.query as Record<string, string | undefined> & { count?: number };
        const now = await d.scheduler.schedules.now();
        const from = q.from === undefined ? now : parseInstant(q.from, "from");
        const startAt = q.start_at === undefined ? null : parseInstant(q.start_at, "start_at", "up");
        const endAt = q.end_at === undefined ? null : parseInstant(q.end_at, "end_at");
        refuseLongTiming({ cron: q.cron, interval: q.interval, timezone: q.timezone, dst: q.dst });
        refuseBlankTiming(q.cron, q.interval);
        // "Never fires in the next five years" counts from `from`, as `orbit schedule preview` does.
        const c = compileTiming(
          { cron: q.cron, interval: q.interval, timezone: q.timezone, dst: q.dst, startAt, endAt },
          from,
        );
        const times: string[] = [];
        let t: number | null = from;
        for (let i = 0; i < (q.count ?? 5); i++) {
          t = c.timing.nextAfter(t);
          if (t === null) break;
          times.push(formatInstant(t));
        }
        const description = describeTiming(c, startAt, endAt);
        const timezone = c.kind === "cron" ? c.zone.name : null;
        return { status: 200, body: { description, timezone, next_fire_times: times } };
      },
    },
  ];
}
