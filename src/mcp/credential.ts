// Which credential an HTTP MCP server was reached with, as a pin records it. A 2026-07-28 server's
// tools/list may vary by the authorization presented, so a pin is only comparable with a listing
// taken under the same credential. The secret never leaves the machine: the pin keeps a slow,
// salted fingerprint of it (scrypt, salted with the server's origin), enough to tell "the same
// credential" from "another one" without making a guessable password cheap to confirm. Pure.
import { scryptSync } from "node:crypto";

/** Request headers that carry a credential (by name; matched case-insensitively). */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|token|auth|api[-_]?key|secret|session|password/i;

/** "none" when no header carries a credential, else `scrypt:<hex>` over the credential headers. */
export function credentialIdentity(url: string, headers: Readonly<Record<string, string>>): string {
  const names = Object.keys(headers)
    .filter((name) => CREDENTIAL_HEADER.test(name) && headers[name] !== "")
    .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));
  if (names.length === 0) return "none";
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    origin = url;
  }
  const material = names.map((name) => `${name.toLowerCase()}\n${headers[name]}`).join("\n\n");
  // N=2^14, r=8: ~20-50 ms once per session, so a guessable secret costs as much per guess.
  const key = scryptSync(material, `kiwi-mcp-credential\0${origin}`, 16, { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return `scrypt:${key.toString("hex")}`;
}

/** The credential headers' names (for messages): which headers the fingerprint covers. */
export function credentialHeaders(headers: Readonly<Record<string, string>>): string[] {
  return Object.keys(headers).filter((name) => CREDENTIAL_HEADER.test(name) && headers[name] !== "").map((n) => n.toLowerCase()).sort();
}
