/**
 * `npm run bench:start`: how long a process of Orbit takes to start (docs/benchmarks.md § Starting
 * a process), from the built package (`npm run build` first): `orbit version` and `orbit schedule
 * list` with nothing listening (wall time to exit), and `orbit server` on a fresh SQLite folder
 * (wall time until `/readyz` answers 200, polled every 5 ms, and the server's CPU until then, read
 * from /proc). `node -e 0` is the floor. `--root DIR` measures another checkout (a before tree).
 *
 *   npm run bench:start -- --runs 10 [--root /tmp/before]
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: { runs: { type: "string", default: "10" }, root: { type: "string", default: "." } },
});
const runs = Number(args.runs);
const orbit = join(resolve(args.root), "bin", "orbit.js");
const TICKS_PER_SECOND = 100;

function mean(values: number[]): string {
  return `${(values.reduce((a, b) => a + b, 0) / values.length).toFixed(0)} ms`;
}

function exitWall(argv: string[]): number {
  const started = performance.now();
  spawnSync(process.execPath, argv, { stdio: "ignore" });
  return performance.now() - started;
}

/** CPU milliseconds a running process has used (Linux /proc: utime + stime, in clock ticks). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

async function serverStart(port: number): Promise<{ wall: number; cpu: number }> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-bench-start-"));
  const started = performance.now();
  const child = spawn(process.execPath, [orbit, "server", "--data-dir", dir, "--port", String(port)], {
    stdio: "ignore",
  });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (child.exitCode !== null) throw new Error(`orbit server exited with ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return { wall: performance.now() - started, cpu: cpuMs(child.pid as number) };
  } finally {
    await new Promise((r) => {
      child.once("exit", r);
      child.kill("SIGTERM");
    });
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; ${runs} runs each; ${orbit}`,
);
const rows: [string, string][] = [];
rows.push(["node -e 0", mean(Array.from({ length: runs }, () => exitWall(["-e", "0"])))]);
rows.push(["orbit version", mean(Array.from({ length: runs }, () => exitWall([orbit, "version"])))]);
rows.push([
  "orbit schedule list (nothing listening)",
  mean(Array.from({ length: runs }, () => exitWall([orbit, "schedule", "list", "--server", "http://127.0.0.1:1"]))),
]);
const servers: { wall: number; cpu: number }[] = [];
for (let i = 0; i < runs; i++) servers.push(await serverStart(7390 + (i % 5)));
rows.push(["orbit server: wall to /readyz 200", mean(servers.map((s) => s.wall))]);
rows.push(["orbit server: CPU to /readyz 200", mean(servers.map((s) => s.cpu))]);
for (const [what, value] of rows) console.log(`${what.padEnd(42)} ${value}`);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
