/**
 * `engines` is honest (docs/operations.md § Install): every Node version Orbit's package.json
 * accepts is accepted by every package an install of orbit-scheduler brings (the lockfile's
 * non-dev packages, transitive ones included). A dependency that narrows its range (better-sqlite3
 * lists the Node majors it ships for) must narrow ours too, or npm would install Orbit on a Node
 * its SQLite driver does not support and only warn. Working on Orbit itself needs more (vitest's
 * bundler): `devEngines`, which npm enforces in this checkout and ignores in an install.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  engines: { node: string };
  devEngines: { runtime: { name: string; version: string } };
};
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { dev?: boolean; optional?: boolean; engines?: { node?: string } | string[] }>;
};

describe("engines", () => {
  const ours = manifest.engines.node;

  it("is a valid range, with the lockfile's root in step", () => {
    expect(semver.validRange(ours)).not.toBeNull();
    expect(lock.packages[""]?.engines).toEqual(manifest.engines);
  });

  it("accepts no Node version that a production dependency refuses", () => {
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === "" || entry.dev === true || Array.isArray(entry.engines)) continue;
      const theirs = entry.engines?.node;
      if (theirs !== undefined && !semver.subset(ours, theirs)) refused.push(`${path}: ${theirs}`);
    }
    expect(refused, `engines.node is "${ours}"`).toEqual([]);
  });

  it("develops (devEngines: install, build, test) on no Node that a dev dependency refuses or Orbit does", () => {
    const dev = manifest.devEngines.runtime;
    expect(dev.name).toBe("node");
    // Each part of the development range lies inside Orbit's own range.
    for (const part of dev.version.split("||")) expect(semver.subset(part, ours), part).toBe(true);
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      // Optional dev packages are other platforms' native builds: npm skips those that do not fit.
      if (entry.dev !== true || entry.optional === true || Array.isArray(entry.engines)) continue;
      const theirs = entry.engines?.node;
      if (theirs !== undefined && !semver.subset(dev.version, theirs)) refused.push(`${path}: ${theirs}`);
    }
    expect(refused, `devEngines.runtime.version is "${dev.version}"`).toEqual([]);
  });

  it("accepts the Node versions the README, quickstart and operations.md name (20.19+, 22.12+, 24–26) and no other", () => {
    // It said ^20.12.0 || 22.x || 23.x …: Node 20.12–20.18, 22.0–22.11 and 23, which no document named
    // and none tried, and on which a CommonJS worker cannot require() the package.
    for (const v of ["20.19.0", "20.20.2", "22.12.0", "22.23.0", "24.0.0", "25.1.0", "26.3.0"]) {
      expect(semver.satisfies(v, ours), v).toBe(true);
    }
    for (const v of ["18.20.0", "20.12.0", "20.18.3", "21.7.3", "22.11.0", "23.11.0", "27.0.0"]) {
      expect(semver.satisfies(v, ours), v).toBe(false);
    }
    // What the documents say, in their words.
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme).toContain("Node.js (20.19 or a later 20, 22.12 or a later 22, or 24–26)");
    const operations = readFileSync(join(root, "docs", "operations.md"), "utf8");
    expect(operations).toContain(`engines \`${ours}\``);
  });
});
