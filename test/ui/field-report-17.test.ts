/**
 * What a seventeenth tester met, in Chromium against a server with ~300 schedules: a link with a
 * search over the server's 200 characters was sent and refused at every refresh; the top bar's
 * "updated" time named no zone beside the page's UTC instants; link values the lists do not
 * understand were ignored silently and kept in the URL; on a slow link a schedule's page stood
 * under its title alone while four round trips ran one after the other.
 */
import type { Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a tester's seventeenth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });
  const status = () => r.page.locator("#status .message-text").allInnerTexts();
  const hash = () => new URL(r.page.url()).hash;

  it("cuts a link's search to the server's 200 characters instead of sending it to be refused", async () => {
    for (const id of ["report-a", "report-b"])
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h" });
    const searches: number[] = [];
    const onRequest = (req: import("playwright-core").Request) => {
      const url = new URL(req.url());
      if (url.pathname.endsWith("/v1/schedules")) searches.push([...(url.searchParams.get("q") ?? "")].length);
    };
    r.page.on("request", onRequest);
    await r.open(`#/?q=${"a".repeat(201)}`);
    r.page.off("request", onRequest);
    // Sent whole, it was refused (400) at every refresh: the table empty, the create form gone.
    expect(searches.length).toBeGreaterThan(0);
    expect(Math.max(...searches)).toBe(200);
    expect(await r.page.locator("#search").inputValue()).toBe("a".repeat(200));
    expect(hash()).toBe(`#/?q=${"a".repeat(200)}`);
    expect(await status()).toEqual(["from the link: cut the search to the server's 200 characters (it held 201)"]);
    expect(await r.page.locator("#status p[data-refresh]").count()).toBe(0);
    expect(await r.page.locator("#create").count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it("names the zone of the top bar's 'updated' time, as every local time of the UI does", async () => {
    await r.open("#/");
    const updated = r.page.locator("#updated");
    // The rig's browser is in Europe/Berlin (en-GB), its clock at 2026-11-15T18:51:00.347Z.
    expect(await updated.innerText()).toBe("updated 19:51:00 CET");
    expect(await updated.getAttribute("title")).toBe(
      "The last refresh that succeeded: 2026-11-15T18:51:00.347Z (your time zone: Europe/Berlin)",
    );
  });

  it("leaves out of the URL what a list's link holds that it does not understand, and says so", async () => {
    // A page without its cursor: "1–2 of 2" under a URL saying page 3.
    await r.open("#/?page=3");
    expect(hash()).toBe("#/");
    expect(await r.page.locator("#page-info").innerText()).toMatch(/^1–\d+ of \d+$/);
    expect(await status()).toEqual([
      "from the link: left out page=3 (a page without its cursor: the first page is shown)",
    ]);
    // Filters the list has no such value of: shown as "any …" over the unfiltered list.
    await r.open("#/?q=report&state=bogus&outcome=xyz&sort=bogus&order=up&colour=red");
    expect(hash()).toBe("#/?q=report");
    expect(await status()).toEqual([
      "from the link: left out state=bogus (the states are active, paused, ended); left out outcome=xyz (the outcomes are failed, succeeded, cancelled, none, not_starting); left out sort=bogus (the sorts are id, next_fire, last_fire, workflow, failures, fired, skipped, updated); left out order=up (the orders are asc, desc); left out colour=red (not one of this list's filters: q, state, workflow, outcome, overdue, sort, order)",
    ]);
    expect(await r.page.locator("#list-summary").innerText()).toMatch(/^2 schedules match/);
    // A link the list understands is kept as it is, and nothing is said.
    await r.open("#/?state=active&sort=failures&order=desc");
    expect(hash()).toBe("#/?state=active&sort=failures&order=desc");
    expect(await status()).toEqual([]);
    expect(await r.page.locator("#filter-state").inputValue()).toBe("active");
    // A cursor the server refuses opened the first page, as before; now it is said too.
    await r.open("#/?page=3&cursor=garbage");
    expect(hash()).toBe("#/");
    expect(await status()).toEqual([
      "from the link: left out page=3 and its cursor (the server refused the cursor: the first page is shown)",
    ]);

    // The executions list alike, its time range checked by its fields.
    await r.open("#/executions?status=bogus&workflow=Reports&created_after=notadate&after=notadate");
    expect(hash()).toBe("#/executions?workflow=Reports");
    expect(await r.page.locator("#x-status").inputValue()).toBe("");
    expect(await status()).toEqual([
      "from the link: left out status=bogus (the statuses are RUNNING, COMPENSATING, COMPLETED, FAILED, CANCELLED); left out created_after=notadate (not one of this list's filters: status, workflow, schedule_id, after, before); left out after=notadate (not a UTC date and time such as 2026-11-15T18:51)",
    ]);
    await r.open("#/executions?status=FAILED&after=2026-11-15T18:00");
    expect(hash()).toBe("#/executions?status=FAILED&after=2026-11-15T18:00");
    expect(await status()).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("shows a schedule's page as loading at once and asks what does not depend on another answer together", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "slow-link", workflow: "Reports", interval: "1h" });
    // Every request is held until released: what the page asks before any answer comes is what
    // it asks together (chained, each waited for the one before: 9 s at 2 s a request).
    const held: Route[] = [];
    let holding = true;
    const handler = async (route: Route) => {
      if (holding) held.push(route);
      else await route.continue();
    };
    await r.page.goto("about:blank");
    await r.page.route("**/v1/**", handler);
    await r.page.goto(`${r.proxy.url}/#/schedules/slow-link`);
    const asked = () => held.map((route) => new URL(route.request().url()).pathname.replace(/^.*\/v1\//, ""));
    const wanted = ["me", "schedules/slow-link", "schedules/slow-link/occurrences", "executions", "workflows"];
    await r.until(
      async () => asked(),
      (paths) => wanted.every((p) => paths.includes(p)),
      "the page's first requests, together",
    );
    // Nothing has answered, and the page says it is loading (it stood under its title alone).
    expect(await r.page.locator(".detail-body").innerText()).toBe("Loading the schedule…");
    holding = false;
    for (const route of held.splice(0)) await route.continue();
    await r.page.getByRole("heading", { name: "Recent executions" }).waitFor();
    await r.page.unroute("**/v1/**", handler);
    expect(pageErrors).toEqual([]);
  });
});
