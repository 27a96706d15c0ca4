// Canonical JSON: the one text every structured digest is computed over.
// Byte-compatible with Python's json.dumps(sort_keys=True, separators=(",", ":")); see
// shared/specs/canonical-json.md. Pure: values in, strings out.
import { KiwiError } from "../errors.ts";
import { Float, type CanonicalValue } from "./value.ts";

/** Renders a canonical value as its canonical JSON text (ASCII only). */
export function renderCanonicalJson(value: CanonicalValue): string {
  const parts: string[] = [];
  write(value, parts, []);
  return parts.join("");
}

/**
 * `at` is the path to `value`, kept as a stack of keys and indexes: the JSON pointer is only
 * spelled out for an error (building it for every value was a quarter of hashing a manifest).
 */
function write(value: CanonicalValue | undefined, out: string[], at: (string | number)[]): void {
  if (value === null) out.push("null");
  else if (value === true) out.push("true");
  else if (value === false) out.push("false");
  else if (typeof value === "string") out.push(renderString(value));
  else if (typeof value === "bigint") out.push(value.toString());
  // A plain number is an integer when integral (floats that look integral arrive as Float).
  else if (typeof value === "number") out.push(Number.isInteger(value) ? renderInteger(value) : renderFloat(value, pointerOf(at)));
  else if (value instanceof Float) out.push(renderFloat(value.value, pointerOf(at)));
  else if (Array.isArray(value)) {
    out.push("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(",");
      at.push(i);
      write(value[i], out, at);
      at.pop();
    }
    out.push("]");
  } else if (typeof value === "object") {
    const keys = sortedKeys(value);
    out.push("{");
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (i > 0) out.push(",");
      out.push(renderString(key), ":");
      at.push(key);
      write(value[key], out, at);
      at.pop();
    }
    out.push("}");
  } else {
    throw new KiwiError("E_INPUT_INVALID", `value at "${pointerOf(at) || "/"}" is not JSON (${typeof value})`, {
      hint: "only null, booleans, numbers, strings, arrays and objects can be hashed",
    });
  }
}

function pointerOf(at: readonly (string | number)[]): string {
  return at.map((segment) => `/${typeof segment === "number" ? segment : escapePointer(segment)}`).join("");
}

/** No UTF-16 unit at or past U+D800: code-unit order is code-point order (nearly every key). */
const BELOW_SURROGATES = /^[\u0000-\ud7ff]*$/;

/** The object's keys in code-point order: the native sort when no key can tell the orders apart. */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  return keys.every((k) => BELOW_SURROGATES.test(k)) ? keys.sort() : keys.sort(compareCodePoints);
}

function renderInteger(value: number): string {
  // Integer -0 is 0 (spec); past 2^53 a number came from a double, so print its exact value.
  return value === 0 ? "0" : Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
}

/** Python's float repr: shortest round-trip digits, positional for -4 <= exp < 16. */
export function renderFloat(value: number, pointer = ""): string {
  if (!Number.isFinite(value)) {
    throw new KiwiError("E_INPUT_INVALID", `value at "${pointer || "/"}" is ${value}, which canonical JSON cannot express`, {
      hint: "NaN and the infinities are not JSON numbers; use a string or a large finite number",
    });
  }
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, expText] = Math.abs(value).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const exp = Number(expText);
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1) || "0";
    return `${sign}${intPart}.${frac}`;
  }
  const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const expSign = exp < 0 ? "-" : "+";
  return `${sign}${head}e${expSign}${String(Math.abs(exp)).padStart(2, "0")}`;
}

const SAFE_ASCII = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string with Python's ensure_ascii escaping over UTF-16 code units. */
export function renderString(text: string): string {
  if (SAFE_ASCII.test(text)) return `"${text}"`;
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    switch (unit) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += "\\\\"; break;
      case 0x0a: out += "\\n"; break;
      case 0x0d: out += "\\r"; break;
      case 0x09: out += "\\t"; break;
      case 0x08: out += "\\b"; break;
      case 0x0c: out += "\\f"; break;
      default:
        out += unit < 0x20 || unit > 0x7e ? `\\u${unit.toString(16).padStart(4, "0")}` : text[i];
    }
  }
  return `${out}"`;
}

/**
 * Orders strings by Unicode code point. UTF-16 code-unit order differs only where a surrogate
 * meets a unit in U+E000..U+FFFF, so those two ranges are swapped before comparing.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return adjust(x) - adjust(y);
  }
  return a.length - b.length;
}

/**
 * `items` in code-point order of `key`, stably: a copy as they are when already in that order, else
 * sorted. Most lists kiwi orders come in order already (a tool's files from discovery, which a cold
 * lock orders three times per tool; a lock's added tools); checking the n - 1 neighbours is a
 * fraction of the comparisons a sort of sorted input still makes.
 */
export function inCodePointOrder<T>(items: readonly T[], key: (item: T) => string): T[] {
  for (let i = 1; i < items.length; i++) {
    if (compareCodePoints(key(items[i - 1]!), key(items[i]!)) > 0) return [...items].sort((a, b) => compareCodePoints(key(a), key(b)));
  }
  return [...items];
}

function adjust(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** JSON.rawJSON (ES2025, in Bun): a JSON text JSON.stringify inserts as it is. */
const rawJson = (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON;
const isRawJSON = (JSON as unknown as { isRawJSON: (value: unknown) => boolean }).isRawJSON;

/**
 * JSON.parse, except that a number JSON.parse would change (an integer past 2^53, `1.0`, `10.50`,
 * `1e400`) is kept as its text, a raw JSON value (`isRawJson`) that JSON.stringify writes back as
 * it came: an API's 64-bit id printed after a transform is the id it sent.
 */
export function parseJsonKeepingNumbers(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && context?.source !== undefined && JSON.stringify(value) !== context.source ? rawJson(context.source) : value,
  );
}

/** A number `parseJsonKeepingNumbers` kept as its text: a leaf, though typeof says "object". */
export function isRawJson(value: unknown): boolean {
  return isRawJSON(value);
}

function exactReplacer(_key: string, v: unknown): unknown {
  if (typeof v === "bigint") return rawJson(v.toString());
  if (v instanceof Float) return rawJson(renderFloat(v.value));
  return v;
}

/**
 * JSON text of a value as JSON.stringify writes it (key order kept, `indent` for people), but
 * lossless: an integer past 2^53 (bigint) keeps every digit and an integral float (Float) keeps its
 * `.0`, so what kiwi prints or sends is what the lock hashed. The one renderer for output; never
 * feeds a digest (renderCanonicalJson does).
 */
export function renderLosslessJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, exactReplacer, indent);
}

/** RFC 6901 escaping of one pointer segment. */
export function escapePointer(segment: string): string {
  // replaceAll with strings, not regular expressions: each of those compiles on first use, which a
  // warm exec (its parameters' pointers) paid ~0.08 ms for.
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** RFC 6901 unescaping of one pointer segment (`~1` before `~0`, so `~01` stays `~1`). */
export function unescapePointer(segment: string): string {
  return segment.replaceAll("~1", "/").replaceAll("~0", "~");
}
