/**
 * A misspelled required option gets the suggestion a misspelled optional one gets (`--cronn` →
 * `(Did you mean --cron?)`), not "required option … not specified" (docs/cli.md: the suggestion
 * comes first also where the option it stands for is required).
 */
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

function server(): FakeServer {
  return new FakeServer(() => ({ status: 500, body: { code: "INTERNAL", message: "nothing should be sent" } }));
}

describe("a misspelled required option", () => {
  const cases: Array<[string, string[], string]> = [
    ["--workflw for --workflow", ["schedule", "create", "x", "--workflw", "W", "--cron", "* * * * *"], "--workflow"],
    ["--workflw=W for --workflow", ["schedule", "create", "x", "--workflw=W", "--cron", "* * * * *"], "--workflow"],
    [
      "--strat-at for --start-at",
      ["schedule", "backfill", "x", "--strat-at", "2026-01-01T00:00:00Z", "--end-at", "2026-01-02T00:00:00Z"],
      "--start-at",
    ],
  ];
  for (const [name, argv, flag] of cases) {
    it(`${name}: names the option it stands for, exit 2, nothing sent`, async () => {
      const s = server();
      const r = await s.run(argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^orbit: unknown option '--[a-z-]+'\\n\\(Did you mean ${flag}\\?\\)\\n`));
      expect(r.stderr).not.toContain("not specified");
      expect(s.requests).toEqual([]);
    });
  }

  it("an unknown option that stands for another one leaves the missing one named", async () => {
    const r = await server().run(["schedule", "create", "x", "--cronn", "* * * * *"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("required option '--workflow <name>' not specified");
  });

  it("a synonym still comes first (--from for the required --start-at)", async () => {
    const r = await server().run([
      "schedule",
      "backfill",
      "x",
      "--from",
      "2026-01-01T00:00:00Z",
      "--end-at",
      "2026-01-02T00:00:00Z",
    ]);
    expect(r.stderr).toMatch(/'--from'\n\(Did you mean --start-at\?\)/);
  });
});
