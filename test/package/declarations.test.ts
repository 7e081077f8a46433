/**
 * The package's type declarations compile for a TypeScript user without @types/node (docs/workflows.md
 * § A workflow): a strict NodeNext project with `"types": []` (what TypeScript 7 does by default)
 * type-checks the worker example of docs/workflows.md and a client call against the declarations
 * reachable from dist/index.d.ts, library checks included. They once imported `node:http` (the
 * worker's keep-alive Agent), which such a project cannot resolve. `fetch` and `AbortSignal` come
 * from TypeScript's default DOM library, as in any project that does not set `lib`.
 *
 * It reads the dist/ that `npm install`/`npm run build` produced, as test/package/pack.test.ts does.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../e2e/harness.js";

const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

/** The first ```ts block of docs/workflows.md, as written (it declares the functions its steps call). */
function workflowsExample(): string {
  const doc = readFileSync(join(ROOT, "docs", "workflows.md"), "utf8");
  const code = /```ts\n([\s\S]*?)```/.exec(doc)?.[1];
  if (code === undefined) throw new Error("docs/workflows.md has no ```ts block");
  return code;
}

// ServerUnreachableError and Created were not exported: a user could tell an unreachable server
// from a refusal only by the error's name, and could not name what startExecution answers.
const CLIENT = `
import { type Created, type ExecutionJson, OrbitClient, OrbitError, ServerUnreachableError } from "orbit-scheduler";
const client = new OrbitClient({ server: "http://127.0.0.1:7233" });
try {
  const { execution_id } = await client.triggerSchedule("orders-every-10s");
  if (execution_id !== null) console.log((await client.getExecution(execution_id)).status);
  const started: Created<ExecutionJson> = await client.startExecution({ workflow: "Report", input: {} });
  console.log(started.created, started.value.execution_id);
} catch (err) {
  if (err instanceof OrbitError) console.log(err.code);
  else if (err instanceof ServerUnreachableError) console.log(err.baseUrl, err.reason);
}
`;

/** `tsc -p <project>`: its exit code and what it printed. */
function tsc(project: string): Promise<{ code: number; text: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, "-p", project], { cwd: project, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : -1, text: stdout + stderr });
    });
  });
}

describe("type declarations", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-types-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // The package as installed, declarations only. A copy, not a link: from a link's target
  // TypeScript would find this checkout's @types/node.
  beforeAll(() => {
    const installed = join(dir, "node_modules", "orbit-scheduler");
    mkdirSync(installed, { recursive: true });
    cpSync(join(ROOT, "package.json"), join(installed, "package.json"));
    cpSync(join(ROOT, "dist"), join(installed, "dist"), {
      recursive: true,
      filter: (src) => !src.endsWith(".js") && !src.endsWith(".map"),
    });
  });

  it("compile in a strict NodeNext project without @types/node", async () => {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          types: [],
          skipLibCheck: false,
          noEmit: true,
        },
        files: ["worker.ts", "client.ts"],
      }),
    );
    writeFileSync(join(dir, "worker.ts"), workflowsExample());
    writeFileSync(join(dir, "client.ts"), CLIENT);
    const out = await tsc(dir);
    expect(out.text).not.toMatch(/node:/);
    expect(out.code, out.text).toBe(0);
  }, 150_000);

  it("resolve orbit-scheduler/server under TypeScript 5's old default, moduleResolution node", async () => {
    // `exports` alone is not read under "node" (node10): the server entry had no types there
    // (TS2307) while the main one resolved through "types" (a tester; typesVersions maps it).
    const app = join(dir, "node10");
    mkdirSync(app, { recursive: true });
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: "ES2022",
          module: "esnext",
          moduleResolution: "node",
          skipLibCheck: true,
          noEmit: true,
        },
        files: ["embed.ts"],
      }),
    );
    writeFileSync(
      join(app, "embed.ts"),
      `import { startServer } from "orbit-scheduler/server";
import { OrbitClient } from "orbit-scheduler";
export async function main(): Promise<void> {
  const server = await startServer({ port: 0, dataDir: ".orbit" });
  console.log(new OrbitClient({ server: server.url }));
  await server.close();
}
`,
    );
    const out = await tsc(app);
    expect(out.code, out.text).toBe(0);
  }, 150_000);
});
