/**
 * Addresses a webhook must never reach (docs/security.md § Webhooks): link-local ranges, where
 * cloud instance metadata services answer (169.254.169.254 on AWS, GCP and Azure, and their
 * credentials with it), and the metadata addresses outside those ranges (AWS's IPv6 fd00:ec2::254,
 * Alibaba's 100.100.100.200). Anyone allowed to manage a schedule chooses its webhook URLs, and the
 * server makes the request: without this a schedule could read the server's cloud credentials.
 */
import { isIP } from "node:net";

const METADATA = new Set(["fd00:ec2::254", "100.100.100.200"]);

/** True when `address` (an IP literal, IPv6 with or without brackets) is one a webhook must not reach. */
export function isBlockedAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, "").toLowerCase();
  const kind = isIP(a);
  if (kind === 4) return a.startsWith("169.254.") || METADATA.has(a);
  if (kind !== 6) return false;
  if (METADATA.has(a)) return true;
  // fe80::/10 is fe80:: to febf::.
  if (/^fe[89ab][0-9a-f]?:/.test(a)) return true;
  const v4 = embeddedIPv4(a);
  return v4 !== null && isBlockedAddress(v4);
}

/**
 * The IPv4 address an IPv6 address carries in a form that reaches it, or null: mapped
 * (::ffff:a.b.c.d; URL parsing writes ::ffff:a9fe:a9fe), compatible (::a.b.c.d), SIIT
 * (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96 and 64:ff9b:1::/48) and 6to4 (2002:AABB:CCDD::/48).
 * Only the mapped form was checked, so [::169.254.169.254] and [64:ff9b::a9fe:a9fe] passed.
 */
function embeddedIPv4(a: string): string | null {
  const w = hextets(a);
  if (w === null) return null;
  const quad = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
  if (w[0] === 0x2002) return quad(w[1] as number, w[2] as number);
  const prefix = w.slice(0, 6).join(",");
  const nat64 = w[0] === 0x64 && w[1] === 0xff9b && (w[2] === 1 || prefix === "100,65435,0,0,0,0");
  if (nat64 || prefix === "0,0,0,0,0,0" || prefix === "0,0,0,0,0,65535" || prefix === "0,0,0,0,65535,0") {
    return quad(w[6] as number, w[7] as number);
  }
  return null;
}

/** The eight 16-bit words of a valid IPv6 address (a trailing dotted quad included), or null. */
function hextets(a: string): number[] | null {
  let text = a;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const words = [...h, ...(tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill("0")), ...t];
  return words.length === 8 ? words.map((x) => Number.parseInt(x, 16)) : null;
}
