/**
 * The settings table (src/domain/setting-table.ts) is the one list of schedule settings: the API's
 * bodies and OpenAPI, the CLI's flags and `--unset`, the defaults and the docs follow it. A setting
 * added to the table and missed in a document fails here; one missed in the stored type does not
 * compile.
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import * as S from "../../src/api/schemas.js";
import { addSettingsFlags, settingsBody } from "../../src/cli/schedule-flags.js";
import {
  SCHEDULE_DEFAULTS,
  SCHEDULE_SETTINGS,
  SETTING_KEYS,
  type SettingDeclaration,
  UNSETTABLE_SETTINGS,
} from "../../src/domain/setting-table.js";
import { refuseUnknownKeys } from "../../src/scheduler/settings.js";

const doc = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), "utf8");
const declared = Object.entries(SCHEDULE_SETTINGS) as [string, SettingDeclaration][];

describe("the settings table", () => {
  it("gives the API's create and patch bodies every setting, the patch all but the id", () => {
    expect(Object.keys(S.CreateScheduleBody.properties)).toEqual(SETTING_KEYS);
    expect(Object.keys(S.PatchScheduleBody.properties)).toEqual(SETTING_KEYS.filter((k) => k !== "schedule_id"));
    const props = S.CreateScheduleBody.properties as Record<string, { description?: string }>;
    for (const [key, d] of declared) expect(props[key]?.description).toBe(d.schema.description);
  });

  it("accepts exactly its keys, and suggests the right one for another product's name", () => {
    expect(() => refuseUnknownKeys(Object.fromEntries(SETTING_KEYS.map((k) => [k, null])), SETTING_KEYS)).not.toThrow();
    expect(() => refuseUnknownKeys({ misfire_policy: "x" }, SETTING_KEYS)).toThrow('did you mean "catchup"?');
  });

  it("gives each flagged setting its CLI flag, and the flags build the body under the setting's name", () => {
    const create = addSettingsFlags(new Command("create").exitOverride(), "create");
    const update = addSettingsFlags(new Command("update").exitOverride(), "update");
    const longs = (c: Command) => c.options.map((o) => o.long);
    for (const [, d] of declared) {
      if (d.flag === undefined) continue;
      const long = d.flag.spec.split(" ")[0];
      expect(longs(create)).toContain(long);
      expect(longs(update)).toContain(long);
    }
    expect(longs(update)).toEqual(expect.arrayContaining(["--no-paused", "--unset"]));
    update.parse(
      [
        "--max-catch-up",
        "5",
        "--catchup",
        "catch_up",
        "--input",
        '{"a":1}',
        "--notify",
        "https://a.test",
        "--notify",
        "https://b.test",
        "--label",
        "team=ops",
        "--label",
        "tier=1",
        "--no-paused",
        "--unset",
        "catchup-window",
      ],
      { from: "user" },
    );
    expect(settingsBody(update.opts())).toEqual({
      max_catch_up: 5,
      catchup: "catch_up",
      input: { a: 1 },
      notify: ["https://a.test", "https://b.test"],
      labels: { team: "ops", tier: "1" },
      paused: false,
      catchup_window: null,
    });
    // The workflow is required at create only.
    expect(() => addSettingsFlags(new Command("c").exitOverride(), "create").parse([], { from: "user" })).toThrow(
      /--workflow/,
    );
  });

  it("derives --unset's list and the defaults", () => {
    expect(UNSETTABLE_SETTINGS).toContain("catchup_window");
    expect(UNSETTABLE_SETTINGS).not.toContain("workflow");
    expect(UNSETTABLE_SETTINGS).not.toContain("schedule_id");
    expect(SCHEDULE_DEFAULTS).toEqual({ overlap: "skip", catchup: "skip_missed", paused: false });
  });

  it("is documented: every setting in docs/design.md § Settings, every flag in docs/cli.md", () => {
    const design = doc("design.md");
    const table = design.slice(design.indexOf("## Settings"), design.indexOf("## Timing"));
    const cli = doc("cli.md");
    for (const [key, d] of declared) {
      expect(table, `docs/design.md § Settings names ${key}`).toContain(`\`${key}\``);
      if (d.flag !== undefined) {
        const long = d.flag.spec.split(" ")[0] as string;
        expect(cli, `docs/cli.md names ${long}`).toContain(`\`${long}`);
      }
    }
  });
});
