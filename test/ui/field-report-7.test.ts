/**
 * What a seventh tester met: a status line pushed the schedules list down under the pointer, so a
 * second click on the same spot triggered another schedule; a running execution showed no elapsed
 * time; the backfill dialog said "more than 49" and started 879; the list cut its status text to a
 * few characters; a long workflow name made a phone page scroll sideways; the day grid did not say
 * it shows only 14 days; close fires overprinted their labels; ids broke mid-token at a glance.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a tester's seventh report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("keeps the rows where they are when an action's status appears, so a second click hits the same row", async () => {
    for (const id of ["shift-a", "shift-b", "shift-c"]) {
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h" });
    }
    await r.open("#/?q=shift-");
    const posts: string[] = [];
    r.page.on("request", (req) => {
      if (req.method() === "POST") posts.push(new URL(req.url()).pathname);
    });
    const row = r.page.locator('tr[data-schedule-id="shift-b"]');
    const rowBefore = await row.boundingBox();
    const button = await row.locator('button[aria-label="Trigger shift-b"]').boundingBox();
    if (rowBefore === null || button === null) throw new Error("no row");
    const x = button.x + button.width / 2;
    const y = button.y + button.height / 2;
    await r.page.mouse.click(x, y);
    await r.page.locator("#status p", { hasText: "shift-b" }).waitFor();
    expect(await row.boundingBox()).toEqual(rowBefore);
    await r.page.mouse.click(x, y);
    await r.until(
      async () => posts.length,
      (n) => n === 2,
      "the second trigger",
    );
    expect(posts).toEqual(["/v1/schedules/shift-b/trigger", "/v1/schedules/shift-b/trigger"]);
    // Two lines at once (a refusal while the server is down, and the refresh failing) do not move
    // the rows either.
    await r.page.route("**/v1/**", (route) => route.abort("connectionrefused"));
    await r.page.mouse.click(x, y);
    await r.until(
      () => r.page.locator("#status p").count(),
      (n) => n === 2,
      "the outage lines",
    );
    expect(await row.boundingBox()).toEqual(rowBefore);
    const refusal = r.page.locator("#status p").first();
    expect(await refusal.getAttribute("title")).toMatch(/^could not trigger shift-b: UNAVAILABLE/);
    await r.page.unroute("**/v1/**");
    expect(pageErrors).toEqual([]);
  });
});
