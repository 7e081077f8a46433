/**
 * What a workflow's version may be, shared by the server (src/engine/workflows.ts) and the worker
 * SDK's `defineWorkflow` (src/worker/workflow.ts): semver as semver writes it, without build
 * metadata (docs/workflows.md § Versions).
 */
import semver from "semver";

/** Whether a version is one a workflow can be registered under: semver, written as semver writes it. */
export const isWorkflowVersion = (version: string): boolean => semver.valid(version) === version;

/**
 * The version without its build metadata (`1.0.0` of `1.0.0+build.5`), when that is all that keeps
 * it from being a workflow's; else null. Semver's order ignores build metadata, so "latest" could
 * not choose between `1.0.0+build.5` and `1.0.0`: such a version is refused, and said so.
 */
export function versionWithoutBuild(version: string): string | null {
  const plus = version.indexOf("+");
  if (plus <= 0 || semver.parse(version) === null) return null;
  const base = version.slice(0, plus);
  return isWorkflowVersion(base) ? base : null;
}
