/**
 * Webhooks never reach link-local or cloud metadata addresses (docs/security.md § Webhooks): the
 * settings refuse such a URL, and delivery refuses it too, for a URL stored before the check or a
 * name that resolves to one.
 */
import { describe, expect, it } from "vitest";
import { isBlockedAddress } from "../../src/domain/blocked-address.js";
import { OrbitError } from "../../src/domain/errors.js";
import { validateNotify } from "../../src/engine/outcome-settings.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { deliverOnce } from "./notifier-fixture.js";

describe("isBlockedAddress", () => {
  it.each([
    "169.254.169.254",
    "169.254.0.1",
    "fe80::1",
    "[fe80::1]",
    "febf::abcd",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "fd00:ec2::254",
    "100.100.100.200",
    // The other IPv6 forms that carry an IPv4 address (they passed): compatible, SIIT, NAT64, 6to4.
    "::169.254.169.254",
    "::a9fe:a9fe",
    "::ffff:0:a9fe:a9fe",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b:1::a9fe:a9fe",
    "2002:a9fe:a9fe::",
    "64:ff9b::100.100.100.200",
  ])("blocks %s", (address) => expect(isBlockedAddress(address)).toBe(true));

  it.each([
    "127.0.0.1",
    "10.0.0.1",
    "192.168.1.10",
    "::1",
    "::",
    "fec0::1",
    "fd00::1",
    "hooks.example.test",
    "169.255.0.1",
    "64:ff9b::a00:1",
    "2002:a00:1::",
  ])("lets %s through", (address) => expect(isBlockedAddress(address)).toBe(false));
});

describe("notify settings", () => {
  it.each([
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://[fe80::1]/hook",
    "http://2852039166/", // 169.254.169.254 written as one number: URL parsing normalises it
    "http://0xA9FEA9FE/",
    "http://[::ffff:169.254.169.254]/",
    "https://[fd00:ec2::254]/latest/",
    "http://[::169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[::ffff:0:a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::]/",
  ])("refuses %s, naming the address", (url) => {
    let caught: unknown;
    try {
      validateNotify(url);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(OrbitError);
    expect((caught as OrbitError).code).toBe("INVALID_ARGUMENT");
    expect((caught as OrbitError).message).toMatch(
      /^notify\.url points at \S+, a link-local or cloud metadata address, which webhooks may not reach/,
    );
  });

  it.each([
    "http://127.0.0.1:7774/echo\r\nX-Injected: 1",
    "http://127.0.0.1/a\tb",
    " http://127.0.0.1/",
    "http://127.0.0.1/a b",
  ])("refuses %j, which URL parsing would change (shown one way, sent another)", (url) => {
    expect(() => validateNotify(url)).toThrow(
      "notify.url holds a space or a control character (a line break, a tab), which URL parsing drops or rewrites: the webhook would go elsewhere than it shows; percent-encode it (%20, %0A)",
    );
  });

  it("takes loopback and private addresses (a receiver beside the server)", () => {
    expect(validateNotify(["http://127.0.0.1:9000/hook", "http://10.1.2.3/hook"])).toHaveLength(2);
  });
});

describeEachDialect("webhook delivery to a blocked address", (dialect) => {
  const db = useStore(dialect);

  it("is refused without a request, recorded as the attempt's error", async () => {
    // Stored as a schedule saved before the settings refused it would have it.
    const lines = await deliverOnce(db.store, "http://169.254.169.254/latest/meta-data/", {
      event: "failure",
      schedule_id: "nightly",
    });
    expect(lines[0]).toMatchObject({
      msg: "webhook delivery failed; retrying",
      error: "refused: 169.254.169.254 is a link-local or cloud metadata address",
    });
  });
});
