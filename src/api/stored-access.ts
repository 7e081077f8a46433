/**
 * The access checks of routes on one stored schedule or execution (`/v1/schedules/{id}…`,
 * `/v1/executions/{id}…`), docs/security.md § Hidden objects. A caller that may not see the object
 * is answered exactly as if it did not exist (`404 NOT_FOUND`, the same message): a 403 would tell
 * it that the id is taken, and by which workflow. A caller that may see it but not do what the
 * route does gets 403, which tells it nothing it could not read already. Seeing a schedule takes
 * `schedule` on its workflow (the only action on schedules); seeing an execution takes `read` (a
 * worker identity: one of its workflows). Worker identities are refused (403) on client routes
 * before any lookup, which tells nothing about the id either.
 */
import type { OrbitError } from "../domain/errors.js";
import type { Action, ApiDeps } from "./deps.js";
import type { ApiRequest } from "./route.js";

export interface StoredGuards {
  /** `/v1/schedules/{id}…`: a client identity with `schedule` on the schedule's workflow. */
  schedule(r: ApiRequest): Promise<void>;
  /** `/v1/executions/{id}…`: `action` on the execution's workflow; cancel and retry are for clients only. */
  execution(action: Action): (r: ApiRequest) => Promise<void>;
}

export function storedGuards(d: ApiDeps): StoredGuards {
  const access = d.access;
  /**
   * Refuses `r` unless it may `need` on `workflow`: 404 (`missing`) when it may not `see` it, even
   * with `need` (an identity with `cancel` and no `read` cancelled executions it could not read,
   * and the answer gave it their input; a tester).
   */
  const require = (r: ApiRequest, need: Action, see: Action, workflow: string, missing: () => OrbitError) => {
    if (access === null) return;
    if (!access.allows(r, see, workflow)) throw missing();
    access.require(r, need, workflow);
  };
  return {
    async schedule(r) {
      if (access === null) return;
      access.requireClient(r);
      const id = String(r.params.id);
      const row = await d.scheduler.schedules.row(id);
      require(r, "schedule", "schedule", row.workflow, () => d.scheduler.schedules.notFound(id));
    },
    execution(action) {
      return async (r) => {
        if (access === null) return;
        if (action !== "read") access.requireClient(r);
        const id = String(r.params.id);
        const e = await d.executions.get(id);
        require(r, action, "read", e.workflow, () => d.executions.notFound(id));
      };
    },
  };
}
