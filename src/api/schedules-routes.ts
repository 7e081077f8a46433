/** /v1/schedules: the schedule service and its actions over HTTP (docs/api.md § Schedules). */

import { OrbitError } from "../domain/errors.js";
import type { JsonObject } from "../domain/json.js";
import { inputTextOf, inputTextsOf } from "../domain/json-text.js";
import { applySchedules } from "../scheduler/apply.js";
import type { ListSchedulesQuery } from "../scheduler/schedules.js";
import { SETTING_KEYS } from "../scheduler/settings.js";
import { validateScheduleFile } from "../scheduler/validate-file.js";
import type { ApiDeps } from "./deps.js";
import { FILE_BODY_LIMIT_BYTES } from "./errors.js";
import { fenceOf, refuseIfMatchOnCreate } from "./fences.js";
import type { ApiRequest, RouteDef } from "./route.js";
import * as S from "./schemas.js";
import { storedGuards } from "./stored-access.js";

const schedule = { description: "the schedule", schema: S.Schedule };

export function scheduleRoutes(d: ApiDeps): RouteDef[] {
  const { schedules, actions } = d.scheduler;
  const access = d.access;
  /** Client identities only, and `schedule` on the schedule's workflow (404 without it: stored-access.ts). */
  const guardStored = storedGuards(d).schedule;
  /** Whether the caller may see (and write) stored schedules of a workflow: `schedule` on it. */
  const mayScheduleFor = (r: ApiRequest) => (workflow: string) =>
    access === null || access.allows(r, "schedule", workflow);
  const asObject = (body: unknown): Record<string, unknown> => (body ?? {}) as Record<string, unknown>;
  const fence = (r: ApiRequest) => fenceOf(r.headers, r.query);
  /** A concurrency key a schedule body sets must be one the caller may use (null unsets it). */
  const guardKey = (r: ApiRequest, item: Record<string, unknown> | undefined): void => {
    const key = item?.concurrency_key;
    if (access !== null && typeof key === "string") access.requireConcurrencyKey(r, key);
  };
  /** A body of many schedules (batch, validate, apply): `schedule` on each one's workflow, and its key. */
  const guardEachSchedule = (r: ApiRequest): void => {
    if (access === null) return;
    access.requireClient(r);
    for (const item of (asObject(r.body).schedules ?? []) as Record<string, unknown>[]) {
      const workflow = item?.workflow;
      // An entry without a workflow name is refused by validation, naming it.
      if (typeof workflow === "string") access.require(r, "schedule", workflow);
      guardKey(r, item);
    }
  };

  return [
    {
      method: "POST",
      url: "/v1/schedules",
      summary: "Create a schedule",
      tag: "schedules",
      body: S.CreateScheduleBody,
      documentedBody: S.CreateScheduleDoc,
      responses: { 201: schedule },
      ifMatch: "own",
      etag: true,
      guard: (r) => {
        if (access === null) return;
        access.requireClient(r);
        const workflow = asObject(r.body).workflow;
        access.require(r, "schedule", typeof workflow === "string" ? workflow : "");
        guardKey(r, asObject(r.body));
      },
      handler: async (r) => {
        refuseIfMatchOnCreate(r.headers, asObject(r.body).schedule_id);
        refuseWithoutId(asObject(r.body));
        return { status: 201, body: await schedules.create(asObject(r.body), { inputText: inputTextOf(r.rawBody) }) };
      },
    },
    {
      method: "POST",
      url: "/v1/schedules/batch",
      creates: true,
      bodyLimit: FILE_BODY_LIMIT_BYTES,
      summary: "Create many schedules at once, all or none",
      tag: "schedules",
      body: S.CreateSchedulesBody,
      documentedBody: S.CreateSchedulesDoc,
      responses: {
        201: { description: "how many were created, and their ids in the order given", schema: S.ScheduleBatch },
      },
      guard: guardEachSchedule,
      handler: async (r) => {
        const items = (asObject(r.body).schedules ?? []) as Record<string, unknown>[];
        const texts = inputTextsOf(r.rawBody, "schedules");
        const created = await schedules.createMany(
          items.map((body, i) => ({ body: body ?? {}, text: { inputText: texts[i] } })),
        );
        return { status: 201, body: { created: created.length, schedule_ids: created } };
      },
    },
    {
      method: "POST",
      url: "/v1/schedules/validate",
      bodyLimit: FILE_BODY_LIMIT_BYTES,
      summary: "Check a whole schedules file as apply would write it; writes nothing",
      tag: "schedules",
      body: S.ValidateSchedulesBody,
      responses: { 200: { description: "every entry is valid", schema: S.ScheduleFileCheck } },
      guard: guardEachSchedule,
      handler: async (r) => {
        const entries = (asObject(r.body).schedules ?? []) as Record<string, unknown>[];
        const check = await validateScheduleFile(schedules, entries, mayScheduleFor(r));
        return { status: 200, body: { valid: entries.length, actions: check.actions } };
      },
    },
    {
      method: "POST",
      url: "/v1/schedules/apply",
      creates: true,
      bodyLimit: FILE_BODY_LIMIT_BYTES,
      summary: "Make the schedules match a file in one transaction (scoped prune, dry run)",
      tag: "schedules",
      body: S.ApplySchedulesBody,
      responses: { 200: { description: "what changed (or would, with dry_run)", schema: S.ApplyResult } },
      guard: (r) => {
        guardEachSchedule(r);
        if (access === null) return;
        // Registering a workflow needs `start` on it, as POST /v1/workflows does for a client.
        for (const w of (asObject(r.body).workflows ?? []) as Record<string, unknown>[]) {
          access.require(r, "start", String(w?.name));
        }
      },
      handler: async (r) => {
        const b = asObject(r.body);
        const result = await applySchedules(schedules, {
          schedules: (b.schedules ?? []) as Record<string, unknown>[],
          inputTexts: inputTextsOf(r.rawBody, "schedules"),
          scope: b.scope,
          workflows: (b.workflows ?? []) as Record<string, unknown>[],
          allowUnregistered: b.allow_unregistered === true,
          prune: b.prune === true,
          dryRun: b.dry_run === true,
          ...(access !== null
            ? { requireWorkflow: (w: string) => access.require(r, "schedule", w), visible: mayScheduleFor(r) }
            : {}),
        });
        return { status: 200, body: result as unknown as JsonObject };
      },
    },
    {
      method: "GET",
      url: "/v1/schedules",
      summary: "List schedules by id, or search them (q, outcome, overdue, sort, order)",
      tag: "schedules",
      query: S.ListSchedulesQuery,
      responses: { 200: { description: "a page of schedules", schema: S.ScheduleList } },
      guard: (r) => access?.requireClient(r),
      handler: async (r) => {
        const q = r.query as Omit<ListSchedulesQuery, "visible">;
        const page = await schedules.list({
          ...q,
          ...(access !== null ? { visible: (w: string) => access.allows(r, "schedule", w) } : {}),
        });
        return { status: 200, body: page };
      },
    },
    {
      method: "GET",
      url: "/v1/schedules/:id",
      summary: "Read a schedule",
      tag: "schedules",
      params: S.ScheduleIdParams,
      responses: { 200: schedule },
      etag: true,
      guard: guardStored,
      handler: async (r) => ({ status: 200, body: await schedules.get(String(r.params.id)) }),
    },
    {
      method: "PATCH",
      url: "/v1/schedules/:id",
      summary: "Change a schedule's settings (null unsets)",
      tag: "schedules",
      params: S.ScheduleIdParams,
      query: S.FenceQuery,
      body: S.PatchScheduleBody,
      documentedBody: S.PatchScheduleDoc,
      responses: { 200: schedule },
      ifMatch: true,
      etag: true,
      guard: async (r) => {
        await guardStored(r);
        const workflow = asObject(r.body).workflow;
        if (access !== null && typeof workflow === "string") access.require(r, "schedule", workflow);
        guardKey(r, asObject(r.body));
      },
      handler: async (r) => ({
        status: 200,
        body: await schedules.update(String(r.params.id), asObject(r.body), fence(r), {
          inputText: inputTextOf(r.rawBody),
        }),
      }),
    },
    {
      method: "DELETE",
      url: "/v1/schedules/:id",
      summary: "Delete a schedule (its executions stay)",
      tag: "schedules",
      params: S.ScheduleIdParams,
      query: S.FenceQuery,
      responses: { 204: { description: "deleted" } },
      ifMatch: true,
      guard: guardStored,
      handler: async (r) => {
        await schedules.delete(String(r.params.id), fence(r));
        return { status: 204 };
      },
    },
    action("pause", "Pause a schedule", S.PauseBody, (r) => actions.pause(String(r.params.id), r.body, fence(r))),
    action("resume", "Resume a schedule", S.ResumeBody, (r) => actions.resume(String(r.params.id), r.body, fence(r))),
    {
      method: "POST",
      url: "/v1/schedules/:id/trigger",
      summary: "Start an execution now, under the overlap policy",
      tag: "schedules",
      params: S.ScheduleIdParams,
      query: S.FenceQuery,
      body: S.TriggerBody,
      responses: {
        201: { description: "started", schema: S.TriggerResult },
        200: { description: "not started (overlap)", schema: S.TriggerResult },
      },
      ifMatch: true,
      guard: guardStored,
      handler: async (r) => {
        let skipped: "overlap" | "concurrency" | null = null;
        const result = await actions.trigger(String(r.params.id), r.body, fence(r), (reason) => {
          skipped = reason;
        });
        // The callback runs inside the transaction: one that ran again and started says so by its result.
        d.metrics.onTrigger(result.started ? null : (skipped ?? "overlap"));
        return { status: result.started ? 201 : 200, body: result };
      },
    },
    {
      method: "POST",
      url: "/v1/schedules/:id/backfill",
      summary: "Start the occurrences of a past range (both ends inclusive)",
      tag: "schedules",
      params: S.ScheduleIdParams,
      query: S.FenceQuery,
      body: S.BackfillBody,
      responses: { 200: { description: "what the backfill did", schema: S.BackfillResult } },
      ifMatch: true,
      guard: guardStored,
      handler: async (r) => {
        const result = await actions.backfill(String(r.params.id), r.body, fence(r));
        d.metrics.onBackfill(result.started);
        return { status: 200, body: result };
      },
    },
    {
      method: "GET",
      url: "/v1/schedules/:id/occurrences",
      summary: "The schedule's ledger, newest first",
      tag: "schedules",
      params: S.ScheduleIdParams,
      query: S.OccurrencesQuery,
      responses: { 200: { description: "a page of ledger rows", schema: S.OccurrenceList } },
      guard: guardStored,
      handler: async (r) => ({
        status: 200,
        body: await schedules.occurrences(String(r.params.id), r.query as { cursor?: string; limit?: number }),
      }),
    },
  ];

  function action(
    name: string,
    summary: string,
    body: RouteDef["body"],
    run: (r: ApiRequest) => Promise<JsonObject>,
  ): RouteDef {
    return {
      method: "POST",
      url: `/v1/schedules/:id/${name}`,
      summary,
      tag: "schedules",
      params: S.ScheduleIdParams,
      query: S.FenceQuery,
      ...(body ? { body } : {}),
      responses: { 200: schedule },
      ifMatch: true,
      etag: true,
      guard: guardStored,
      handler: async (r) => ({ status: 200, body: await run(r) }),
    };
  }
}

/**
 * A create body without `schedule_id` is told so as every other body missing a field is
 * (validation.ts; docs/errors.md), not `schedule_id is required`. A body with an unknown key is
 * left to the settings' check, which names it with a suggestion (`id`: did you mean "schedule_id"?).
 */
function refuseWithoutId(body: Record<string, unknown>): void {
  if ("schedule_id" in body || !Object.keys(body).every((k) => (SETTING_KEYS as readonly string[]).includes(k))) return;
  throw new OrbitError("INVALID_ARGUMENT", 'the request body needs "schedule_id"');
}
