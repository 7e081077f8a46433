/**
 * `--workflow Greeter@1.0.0` (and `orbit start Greeter@1.0.0`): the form `schedule list`,
 * `schedule get` and `orbit workers` print is the workflow Greeter pinned to 1.0.0, as
 * `--workflow Greeter --version 1.0.0`; sent whole, the server said "workflow Greeter@1.0.0 is not
 * registered".
 */
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";
import { manualRun, nightlyOrders } from "./fixtures/api.js";

function server(): FakeServer {
  return new FakeServer((req) => {
    if (req.path.startsWith("/v1/schedules")) return { status: req.method === "POST" ? 201 : 200, body: nightlyOrders };
    if (req.path === "/v1/executions") return { status: 201, body: manualRun };
    return undefined;
  });
}

const CREATE = ["schedule", "create", "pin", "--interval", "1h"];

describe("a workflow given as Name@version", () => {
  it("schedule create sends the name and the pinned version, alone or with the same --version", async () => {
    for (const extra of [[], ["--version", "1.0.0"]]) {
      const s = server();
      const r = await s.run([...CREATE, "--workflow", "Greeter@1.0.0", ...extra]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(s.requests[0]?.body).toEqual({
        schedule_id: "pin",
        workflow: "Greeter",
        version: "1.0.0",
        interval: "1h",
      });
    }
  });

  it("schedule update sends the name and the pinned version", async () => {
    const s = server();
    const r = await s.run(["schedule", "update", "pin", "--workflow", "Greeter@2.0.0"]);
    expect(r.code).toBe(0);
    expect(s.requests[0]?.body).toEqual({ workflow: "Greeter", version: "2.0.0" });
  });

  it("orbit start sends the name and the pinned version", async () => {
    const s = server();
    const r = await s.run(["start", "Greeter@1.0.0", "--input", '{"name":"x"}']);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(s.requests[0]?.body).toEqual({ workflow: "Greeter", version: "1.0.0", input: { name: "x" } });
  });

  it("a name alone is sent as before", async () => {
    const s = server();
    await s.run([...CREATE, "--workflow", "Greeter"]);
    expect(s.requests[0]?.body).toEqual({ schedule_id: "pin", workflow: "Greeter", interval: "1h" });
  });

  const refused: Array<[string, string[], string]> = [
    [
      "create with another --version",
      [...CREATE, "--workflow", "Greeter@1.0.0", "--version", "2.0.0"],
      "--workflow Greeter@1.0.0 pins version 1.0.0 but --version is 2.0.0: give one of them",
    ],
    [
      "update with another --version",
      ["schedule", "update", "pin", "--workflow", "Greeter@1.0.0", "--version", "2.0.0"],
      "--workflow Greeter@1.0.0 pins version 1.0.0 but --version is 2.0.0: give one of them",
    ],
    [
      "update with --unset version",
      ["schedule", "update", "pin", "--workflow", "Greeter@1.0.0", "--unset", "version"],
      "--workflow Greeter@1.0.0 pins version 1.0.0 and --unset version clears it: give one of them",
    ],
    [
      "start with another --version",
      ["start", "Greeter@1.0.0", "--version", "2.0.0"],
      "<workflow> Greeter@1.0.0 pins version 1.0.0 but --version is 2.0.0: give one of them",
    ],
    [
      "an empty version",
      [...CREATE, "--workflow", "Greeter@"],
      "--workflow Greeter@: give the name and the version (Name@1.0.0), or the name alone",
    ],
  ];
  for (const [name, argv, message] of refused) {
    it(`${name} is a usage error (exit 2), nothing sent`, async () => {
      const s = server();
      const r = await s.run(argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`orbit: ${message}\n`);
      expect(s.requests).toEqual([]);
    });
  }
});
