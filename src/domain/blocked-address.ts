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
  // An IPv4 address written as IPv6 (::ffff:169.254.169.254; URL parsing gives ::ffff:a9fe:a9fe).
  const mapped = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(a);
  if (mapped === null) return false;
  const v4 =
    mapped[1] ??
    [Number.parseInt(mapped[2] as string, 16), Number.parseInt(mapped[3] as string, 16)]
      .flatMap((word) => [word >> 8, word & 255])
      .join(".");
  return isBlockedAddress(v4);
}
