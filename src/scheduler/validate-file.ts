/**
 * The server-side check of a whole schedules file (`orbit schedule apply`, docs/cli.md): every entry
 * validated as the write it would become — a new schedule's full settings, or an existing
 * schedule's settings with the entry merged over them — including its workflow and input, before
 * anything is written. `apply --dry-run` and the real apply run the same check, so a dry run
 * refuses exactly what the real run would (an unknown zone such as `Europe/Pariss` included).
 * Nothing is written here.
 */
import { OrbitError } from "../domain/errors.js";
import { withRequestPatternBudget } from "../domain/safe-pattern.js";
import type { ScheduleSettings } from "../domain/schedule.js";
import type { Workflow } from "../domain/workflow.js";
import { type Schedules, sharedCompile } from "./schedules.js";
import { mergeSettings, validateSettings } from "./settings.js";

export interface FileCheck {
  /** Per entry, in order: whether it would create a schedule or update an existing one. */
  actions: ("create" | "update")[];
}

/**
 * `visible`: access control, whether the caller may see a stored schedule of a workflow; one it
 * may not see is an id that is taken (409), as apply answers (docs/security.md). Default: all.
 */
export async function validateScheduleFile(
  schedules: Schedules,
  entries: readonly Record<string, unknown>[],
  visible: (workflow: string) => boolean = () => true,
): Promise<FileCheck> {
  // Every input it checks draws from one budget (docs/security.md § Input schemas).
  return withRequestPatternBudget(async () => {
    const { store } = schedules.o;
    const now = await schedules.now();
    const seen = new Set<string>();
    const actions: FileCheck["actions"] = [];
    // One read of the stored rows the file names, timings compiled once per distinct timing, and each
    // workflow (and pinned version) looked up once: a 10,000-entry file is not 20,000 statements.
    const ids = entries.map((e) => e.schedule_id).filter((id): id is string => typeof id === "string");
    const stored = new Map((await store.getSchedules([...new Set(ids)])).map((r) => [r.scheduleId, r]));
    const compile = sharedCompile();
    const { workflows } = schedules.o;
    const resolved = new Map<string, Promise<Workflow>>();
    const resolve = (s: ScheduleSettings): Promise<Workflow> => {
      const key = `${s.workflow}@${s.version ?? ""}`;
      let w = resolved.get(key);
      if (w === undefined) {
        w = workflows.resolve(s.workflow, s.version ?? null);
        resolved.set(key, w);
      }
      return w;
    };
    for (const [i, entry] of entries.entries()) {
      const id = entry.schedule_id;
      const where = `schedules[${i}]${typeof id === "string" ? ` (${id})` : ""}`;
      try {
        if (typeof id !== "string" || id === "") throw new OrbitError("INVALID_ARGUMENT", "schedule_id is required");
        if (seen.has(id)) throw new OrbitError("INVALID_ARGUMENT", `schedule_id ${id} appears twice`);
        seen.add(id);
        const row = stored.get(id) ?? null;
        if (row !== null && !visible(row.workflow))
          throw new OrbitError("ALREADY_EXISTS", `schedule ${id} already exists`);
        let body: Record<string, unknown> = entry;
        if (row !== null) {
          const { input_text: _kept, ...current } = row.spec as unknown as ScheduleSettings & { input_text?: string };
          const { schedule_id: _id, ...patch } = entry;
          body = mergeSettings(current, patch);
        }
        const v = validateSettings(body, now, compile);
        workflows.validateInput(await resolve(v.settings), v.settings.input);
        actions.push(row === null ? "create" : "update");
      } catch (err) {
        if (err instanceof OrbitError) throw new OrbitError(err.code, `${where}: ${err.message}`, err.details);
        throw err;
      }
    }
    return { actions };
  });
}
