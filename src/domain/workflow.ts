import type { JsonObject } from "./json.js";

/**
 * A registered workflow version. Versions are immutable: registering the same name and version
 * again with another input schema is refused, so anything derived from one (a compiled
 * validator) may be cached for the life of the process.
 */
export interface Workflow {
  name: string;
  /** A semver version, e.g. `1.0.0`. "Latest" is the highest by semver precedence. */
  version: string;
  /** JSON Schema (draft 2020-12) for the input; `null` means any JSON object. */
  inputSchema: JsonObject | null;
  description: string | null;
  createdMs: number;
  /** When the version was deprecated ("latest" skips it; docs/outcomes.md), or null/absent. */
  deprecatedMs?: number | null;
}
