/**
 * The files the CLI reads (`--input @FILE`, `schedule apply -f FILE`) are UTF-8: a Latin-1 `café`
 * was read as `caf\uFFFD`, sent and stored (exit 0) where the API refuses the same bytes; a byte
 * order mark made `--input @bom.json` "not JSON" with an invisible character in the message while
 * `apply -f` took it; and `-` (`-f -`, `--input @-`) was a file named `-`: `cannot read -: ENOENT`
 * (a tester). src/domain/read-capped.ts.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { firstInvalidUtf8, readCapped } from "../../src/domain/read-capped.js";
import { freePort, ROOT } from "../e2e/harness.js";
import { childArgs } from "../helpers/child.js";
import { FakeServer } from "./fake-server.js";

const dir = mkdtempSync(join(tmpdir(), "orbit-encoding-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `name` in the test's folder, holding `bytes`. */
function file(name: string, bytes: Buffer | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const LATIN1_INPUT = Buffer.from('{"name":"caf\xe9"}', "latin1");
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const SCHEDULES = '- schedule_id: s1\n  workflow: Uni\n  interval: 1h\n  description: "caf\xe9"\n';

describe("--input @FILE", () => {
  it("refuses a file that is not UTF-8, naming it and the first bad byte, and sends nothing (exit 2)", async () => {
    const path = file("in.json", LATIN1_INPUT);
    const server = new FakeServer(() => undefined);
    const r = await server.run(["start", "Uni", "--input", `@${path}`]);
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      2,
      `orbit: option '--input <json>' argument '@${path}' is invalid. The file ${path} is not UTF-8 (byte 0xE9 at offset 12); save it as UTF-8.`,
    ]);
    expect(server.requests).toEqual([]);
  });

  it("reads a file that starts with a byte order mark as the JSON after it", async () => {
    const path = file("bom.json", Buffer.concat([BOM, Buffer.from('{"name":"café"}')]));
    const server = new FakeServer(() => undefined);
    await server.run(["start", "Uni", "--input", `@${path}`]);
    expect(server.requests.map((q) => (q.body as { input?: unknown }).input)).toEqual([{ name: "café" }]);
  });
});

describe("schedule apply -f FILE", () => {
  it("refuses a file that is not UTF-8 as bad usage (exit 2), and sends nothing", async () => {
    const path = file("s.yaml", Buffer.from(SCHEDULES, "latin1"));
    const server = new FakeServer(() => undefined);
    const r = await server.run(["schedule", "apply", "-f", path]);
    const offset = SCHEDULES.indexOf("\xe9");
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      2,
      `orbit: the file ${path} is not UTF-8 (byte 0xE9 at offset ${offset}); save it as UTF-8`,
    ]);
    expect(server.requests).toEqual([]);
  });
});

describe("- is the standard input", () => {
  /** `orbit <args>` as a process with `stdin` piped in, against a server at `url`. */
  async function withStdin(args: string[], stdin: Buffer | string) {
    const url = `http://127.0.0.1:${await freePort()}`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORBIT_")));
    const proc = spawn(process.execPath, [...childArgs(join(ROOT, "src/cli/entry.ts")), ...args], {
      cwd: ROOT,
      env: { ...clean, ORBIT_SERVER: url },
    });
    let stderr = "";
    proc.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    proc.stdout.resume();
    proc.stdin.end(stdin);
    const [code] = (await once(proc, "close")) as [number | null];
    return { code, stderr: stderr.replace(url, "URL") };
  }

  it("`-f -` reads the schedules from stdin, strictly UTF-8", async () => {
    // Nothing listens at the address: a file read and parsed is sent, and refused for want of a server.
    const ok = await withStdin(["schedule", "apply", "-f", "-"], "- schedule_id: s1\n  workflow: Uni\n");
    expect([ok.code, ok.stderr]).toEqual([
      1,
      "orbit: cannot reach the Orbit server at URL (is `orbit server` running?)\n",
    ]);
    const bad = await withStdin(["schedule", "apply", "-f", "-"], Buffer.from(SCHEDULES, "latin1"));
    expect([bad.code, bad.stderr.split("\n")[0]]).toEqual([
      2,
      `orbit: the standard input is not UTF-8 (byte 0xE9 at offset ${SCHEDULES.indexOf("\xe9")}); send UTF-8`,
    ]);
  });

  it("`--input @-` reads the input from stdin", async () => {
    const ok = await withStdin(["start", "Uni", "--input", "@-"], Buffer.concat([BOM, Buffer.from('{"a":1}')]));
    expect([ok.code, ok.stderr]).toEqual([
      1,
      "orbit: cannot reach the Orbit server at URL (is `orbit server` running?)\n",
    ]);
    const twice = await withStdin(["start", "Uni", "--input", "@-"], '{"a":1,"a":2}');
    expect([twice.code, twice.stderr.split("\n")[0]]).toEqual([
      2,
      `orbit: option '--input <json>' argument '@-' is invalid. The standard input gives the key "a" twice in one object; give each key once.`,
    ]);
  });
});

describe("firstInvalidUtf8", () => {
  it("names the byte where the strict decoder first fails, for every kind of bad sequence", () => {
    const at = (...bytes: number[]): number => firstInvalidUtf8(Uint8Array.from(bytes));
    expect(at(0x61, 0xe9, 0x22)).toBe(1); // Latin-1 é before a quote
    expect(at(0x61, 0xc3, 0xa9)).toBe(3); // UTF-8 é: nothing wrong
    expect(at(0xc0, 0x80)).toBe(0); // overlong NUL
    expect(at(0x61, 0xe0, 0x80, 0x80)).toBe(1); // overlong three-byte form
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // a surrogate
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // past U+10FFFF
    expect(at(0x61, 0x62, 0xe2, 0x82)).toBe(2); // cut short by the end
    expect(at(0x80)).toBe(0); // a continuation byte alone
    expect(at(0xf0, 0x9f, 0x98, 0x80, 0xff)).toBe(4); // an emoji, then 0xFF
  });

  it("agrees with the WHATWG decoder on random bytes: all of it valid, or valid up to the offset", () => {
    // A fixed xorshift sequence, biased towards the bytes that start and continue sequences.
    let seed = 0x9e3779b9;
    const next = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed >>> 0;
    };
    const strict = new TextDecoder("utf-8", { fatal: true });
    const valid = (b: Uint8Array): boolean => {
      try {
        strict.decode(b);
        return true;
      } catch {
        return false;
      }
    };
    const pool = [0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5];
    for (let n = 0; n < 5000; n++) {
      const bytes = Uint8Array.from({ length: next() % 8 }, () => pool[next() % pool.length] as number);
      const offset = firstInvalidUtf8(bytes);
      expect(valid(bytes), `${Buffer.from(bytes).toString("hex")}`).toBe(offset === bytes.length);
      expect(valid(bytes.subarray(0, offset))).toBe(true);
    }
  });

  it("reads a valid file whole and skips only one byte order mark", () => {
    const path = file("two-boms.txt", Buffer.concat([BOM, BOM, Buffer.from("x")]));
    expect(readCapped(path, 1024)).toBe("\ufeffx");
    // `-` is a file's name unless the caller says it means stdin (the server's identities file).
    expect(() => readCapped(join(dir, "-"), 1024)).toThrow(/ENOENT/);
  });
});
