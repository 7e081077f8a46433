/**
 * Orbit's release version, read from package.json. The path is resolved from this module's own
 * location (src/version.ts under tsx, dist/version.js when built): both sit one level below the
 * package root.
 */
import { readFileSync } from "node:fs";

function readVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  const version = (pkg as { version?: unknown }).version;
  if (typeof version !== "string") throw new Error("package.json has no version");
  return version;
}

/** The version in package.json, e.g. `0.1.0`. */
export const VERSION: string = readVersion();
