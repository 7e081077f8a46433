/**
 * A write's revision fence on a schedule (docs/design.md § Changes): `If-Match` answers 412 on a
 * mismatch, `?expected_revision=` 409.
 */
import { OrbitError } from "../domain/errors.js";
import type { ScheduleRow } from "../store/rows.js";

/** A write's revision fence: `If-Match` (412 on mismatch) or `?expected_revision=` (409). */
export interface Fence {
  ifMatch?: number | string | readonly (number | string)[];
  expectedRevision?: number;
}

/** The write's fence against the row it holds: If-Match (412) and expected_revision (409). */
export function checkFence(row: ScheduleRow, fence: Fence): ScheduleRow {
  const id = row.scheduleId;
  const ifMatch = fence.ifMatch === undefined ? undefined : [fence.ifMatch].flat();
  if (ifMatch !== undefined && !ifMatch.some((tag) => String(tag) === String(row.revision))) {
    throw new OrbitError(
      "PRECONDITION_FAILED",
      `schedule ${id} is at revision ${row.revision}, not ${ifMatch.join(" or ")} (If-Match); read it again`,
    );
  }
  if (fence.expectedRevision !== undefined && fence.expectedRevision !== row.revision) {
    throw new OrbitError(
      "CONFLICT",
      `schedule ${id} is at revision ${row.revision}, not the expected ${fence.expectedRevision}; read it again`,
    );
  }
  return row;
}
