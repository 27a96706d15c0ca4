// SHA-256 digests over bytes and canonical texts, and the `sha256:<hex>` notation.
// Pure: takes values and bytes, never paths.
import { KiwiError } from "../errors.ts";
import { renderCanonicalJson } from "./canonical.ts";
import type { CanonicalValue } from "./value.ts";

/** Lowercase hex SHA-256 of bytes or of a string's UTF-8 encoding. */
export function sha256Hex(data: string | Uint8Array | ArrayBuffer): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}

/** SHA-256 of a value's canonical JSON text. */
export function hashCanonical(value: CanonicalValue): { canonical: string; hex: string } {
  const canonical = renderCanonicalJson(value);
  return { canonical, hex: sha256Hex(canonical) };
}

const DIGEST = /^sha256:([0-9a-f]{64})$/;

/** `sha256:<hex>` for a hex digest. */
export function formatDigest(hex: string): string {
  return `sha256:${hex}`;
}

/**
 * Parses a stored `sha256:<hex>` digest and fails closed: an empty, malformed or
 * other-algorithm digest is an error, never a skipped check.
 */
export function parseDigest(text: unknown, subject: string): string {
  const match = typeof text === "string" ? DIGEST.exec(text) : null;
  if (match) return match[1]!;
  const shown = typeof text === "string" ? (text === "" ? "an empty string" : JSON.stringify(text.slice(0, 80))) : String(text);
  const algo = typeof text === "string" && /^[a-z0-9-]+:/.test(text) && !text.startsWith("sha256:") ? text.split(":")[0] : undefined;
  throw new KiwiError(
    "E_LOCK_INVALID",
    algo ? `${subject} uses the unsupported algorithm "${algo}"` : `${subject} is not a sha256 digest (got ${shown})`,
    { hint: 'kiwi only accepts "sha256:" followed by 64 lowercase hex digits; run "kiwi lock" to rewrite it' },
  );
}

/** The first 12 hex digits, for human output. */
export function shortDigest(hex: string): string {
  return hex.replace(/^sha256:/, "").slice(0, 12);
}
