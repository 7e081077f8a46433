/** What the routes need from the composition root (src/server/server.ts builds it). */
import type { Executions } from "../engine/executions.js";
import type { Workflows } from "../engine/workflows.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { ServerMetrics } from "./metrics.js";
import type { ApiRequest } from "./route.js";

/** The server's role for /readyz. */
export type ServerRole = "single" | "leader" | "standby" | "shared";

export interface Readiness {
  ready: boolean;
  role: ServerRole;
  /** Why not ready. */
  message?: string;
}

/** Access checks (docs/design.md § Access control); absent on an open server. */
export interface AccessControl {
  /** Refuses (403) unless the caller may do `action` on workflow `workflow`. */
  require(request: ApiRequest, action: Action, workflow: string): void;
  /** Whether the caller may do `action` on `workflow` (list filtering). */
  allows(request: ApiRequest, action: Action, workflow: string): boolean;
  /**
   * Refuses (403) a schedule's `concurrency_key` outside the caller's `concurrency_keys` globs
   * (docs/security.md § Concurrency keys); any key when the identity names none.
   */
  requireConcurrencyKey(request: ApiRequest, key: string): void;
  /** Refuses worker identities (403) on client-only routes such as /v1/schedules. */
  requireClient(request: ApiRequest): void;
  /** The caller's name, kind and grants, for `GET /v1/me` (the web UI hides what it may not do). */
  describe?(request: ApiRequest): IdentityView;
}

/** The workflows the caller may do `action` on, as a list's filter; undefined on an open server (all). */
export function visibleTo(
  access: AccessControl | null,
  request: ApiRequest,
  action: Action,
): ((workflow: string) => boolean) | undefined {
  return access === null ? undefined : (workflow) => access.allows(request, action, workflow);
}

export interface IdentityView {
  name: string;
  kind: "client" | "worker";
  allow: { workflows: string[]; actions: Action[] }[];
}

export type Action = "schedule" | "start" | "read" | "cancel";

export interface ApiDeps {
  workflows: Workflows;
  executions: Executions;
  scheduler: Scheduler;
  metrics: ServerMetrics;
  readiness(): Promise<Readiness>;
  access: AccessControl | null;
}
