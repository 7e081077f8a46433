/**
 * `--if-match` takes a schedule revision (`3`, `"3"`) and refuses anything else itself (a weak `W/"3"`
 * too: it never matches If-Match, as the server says; it was sent as `"3"` and matched),
 * quoting the value once: sent, `abc` came back as `If-Match "\"abc\"" is not a schedule revision
 * such as "3"`, escaped twice.
 */
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";
import { nightlyOrders } from "./fixtures/api.js";

function server(): FakeServer {
  return new FakeServer(() => ({ status: 200, body: nightlyOrders }));
}

describe("--if-match", () => {
  it("refuses a value that is not a revision, showing it once and plainly (exit 2, nothing sent)", async () => {
    for (const value of ["abc", '"abc"', "", "*", "1.5"]) {
      const s = server();
      const r = await s.run(["schedule", "update", "nightly-orders", "--description", "x", "--if-match", value]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `orbit: option '--if-match <revision>' argument '${value}' is invalid. Give a schedule revision such as 3 (\`orbit schedule get <id> --json\` shows it).\n(add --help for usage)\n`,
      );
      expect(r.stderr).not.toContain("\\");
      expect(s.requests).toEqual([]);
    }
  });

  it('refuses a weak W/"3" (exit 2, nothing sent)', async () => {
    const s = server();
    const r = await s.run(["schedule", "pause", "nightly-orders", "--if-match", 'W/"3"']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("A weak tag (W/…) never matches If-Match");
    expect(s.requests).toEqual([]);
  });

  it('sends 3 and "3" as If-Match: "3"', async () => {
    for (const value of ["3", '"3"']) {
      const s = server();
      const r = await s.run(["schedule", "pause", "nightly-orders", "--if-match", value]);
      expect(r.code).toBe(0);
      // After the read that tells whether the schedule was paused already (schedule-actions.ts).
      expect(s.requests.find((q) => q.method === "POST")?.headers["if-match"]).toBe('"3"');
    }
  });
});
