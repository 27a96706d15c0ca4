// Which credential an HTTP MCP server was reached with, as a pin records it. A 2026-07-28 server's
// tools/list may vary by the authorization presented, so a pin is only comparable with a listing
// taken under the same credential. The secret never leaves the machine: the pin keeps a slow,
// salted fingerprint of it (scrypt, salted with the server's origin), enough to tell "the same
// credential" from "another one" without making a guessable password cheap to confirm. Pure.
import { scryptSync } from "node:crypto";

/** Request headers that carry a credential (by name; matched case-insensitively). */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|token|auth|api[-_]?key|secret|session|password/i;

/** Query parameters that carry a credential: the header names' pattern plus the bare spellings
 * APIs use in URLs (`?key=`, `?sig=`, `?signature=`, `?pass=`, `?pwd=`). */
const CREDENTIAL_QUERY = new RegExp(`${CREDENTIAL_HEADER.source}|^(key|sig|signature|pass|pwd)$`, "i");

/** "none" when neither a header nor the URL carries a credential, else `scrypt:<hex>` over the
 * credential headers, then the URL's userinfo and credential query parameters. A URL without one
 * adds nothing, so a header-only fingerprint is what it always was. */
export function credentialIdentity(url: string, headers: Readonly<Record<string, string>>): string {
  const names = Object.keys(headers)
    .filter((name) => CREDENTIAL_HEADER.test(name) && headers[name] !== "")
    .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  // Labels with a space: no header name can spell them, so URL parts never collide with a header.
  const fromUrl = parsed === undefined ? [] : urlCredentials(parsed).map(([label, value]) => `${label}\n${value}`);
  if (names.length === 0 && fromUrl.length === 0) return "none";
  const origin = parsed?.origin ?? url;
  const material = [...names.map((name) => `${name.toLowerCase()}\n${headers[name]}`), ...fromUrl].join("\n\n");
  // N=2^14, r=8: ~20-50 ms once per session, so a guessable secret costs as much per guess.
  const key = scryptSync(material, `kiwi-mcp-credential\0${origin}`, 16, { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return `scrypt:${key.toString("hex")}`;
}

/** The URL's credentials as [label, value]: userinfo, then credential query parameters in order. */
function urlCredentials(url: URL): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (url.username !== "" || url.password !== "") out.push(["url userinfo", `${url.username}:${url.password}`]);
  for (const [name, value] of url.searchParams) if (CREDENTIAL_QUERY.test(name) && value !== "") out.push([`url query ${name}`, value]);
  return out;
}

/** The URL as it may be shown: userinfo and credential query values replaced with `***`. A string
 * that is no URL is shown as is (it carries no parseable credential). */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (urlCredentials(parsed).length === 0) return url;
  if (parsed.username !== "") parsed.username = "***";
  if (parsed.password !== "") parsed.password = "***";
  const params = new URLSearchParams();
  for (const [name, value] of parsed.searchParams) params.append(name, CREDENTIAL_QUERY.test(name) && value !== "" ? "***" : value);
  parsed.search = params.toString();
  return parsed.href;
}

/** The credential headers' names (for messages): which headers the fingerprint covers. */
export function credentialHeaders(headers: Readonly<Record<string, string>>): string[] {
  return Object.keys(headers).filter((name) => CREDENTIAL_HEADER.test(name) && headers[name] !== "").map((n) => n.toLowerCase()).sort();
}

/** Where the manifest puts the credential kiwi presents (for a refusal's hint): config.headers
 * (a credential header), config.url (userinfo or a credential query parameter), both, or neither. */
export function credentialFields(url: string, headers: Readonly<Record<string, string>>): Array<"config.headers" | "config.url"> {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  return [
    ...(credentialHeaders(headers).length > 0 ? (["config.headers"] as const) : []),
    ...(parsed !== undefined && urlCredentials(parsed).length > 0 ? (["config.url"] as const) : []),
  ];
}
