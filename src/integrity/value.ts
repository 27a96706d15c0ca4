// The lossless value model shared by hashing and parsing (spec: shared/specs/canonical-json.md).
// Integers and floats are different values even when numerically equal; this module says how.

/**
 * A float whose value happens to be integral (`1.0`, `1e16`, `-0.0`). Non-integral floats are plain
 * numbers, since they cannot be mistaken for integers; integral ones need this mark to stay floats.
 */
export class Float {
  constructor(readonly value: number) {}
}

/**
 * A canonical value. Integers are `number` (safe integers) or `bigint` (past 2^53); floats are
 * non-integral `number`s or `Float`. Objects may carry any key, `__proto__` included, as own data.
 */
export type CanonicalValue =
  | null
  | boolean
  | string
  | number
  | bigint
  | Float
  | CanonicalValue[]
  | { [key: string]: CanonicalValue };

/** Builds the value for a number lexeme from JSON or YAML, keeping integer/float identity. */
export function numberFromLexeme(isFloat: boolean, value: number | bigint): number | bigint | Float {
  if (!isFloat) {
    const big = typeof value === "bigint" ? value : BigInt(value);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  }
  const n = Number(value);
  return Number.isInteger(n) || Object.is(n, -0) ? new Float(n) : n;
}

/** Sets an own data property, so keys such as `__proto__` stay keys and never touch a prototype. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * The plain JavaScript view of a canonical value, for validators and config: Float becomes its
 * number and bigint becomes the nearest number. Never feed the result to a digest.
 */
export function toPlain(value: CanonicalValue): unknown {
  if (value === null || typeof value !== "object") return typeof value === "bigint" ? Number(value) : value;
  if (value instanceof Float) return value.value;
  if (Array.isArray(value)) return value.map(toPlain);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, toPlain(value[key]!));
  return out;
}

/**
 * Whether JSON.parse of the value's canonical text gives the value back: true unless it holds an
 * integral float (`Float`) or an integer past 2^53 (`bigint`), the two things JSON.parse loses.
 */
export function survivesJsonParse(value: CanonicalValue): boolean {
  if (value === null || typeof value !== "object") return typeof value !== "bigint";
  if (value instanceof Float) return false;
  if (Array.isArray(value)) return value.every(survivesJsonParse);
  for (const key of Object.keys(value)) if (!survivesJsonParse(value[key]!)) return false;
  return true;
}

/**
 * JSON equality as JSON Schema's `enum` and `const` mean it (and ajv decides it): member order of
 * objects does not matter, array order does. One definition for every checker in kiwi.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return a !== a && b !== b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => jsonEqual(x, (b as unknown[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** A mapping of a lossless value (not null, not an array, not a Float). */
export function isMapping(v: CanonicalValue | undefined): v is { [key: string]: CanonicalValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Float);
}

/** A plain object (not null, not an array): a JSON mapping. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * How deep JSON from outside (call parameters, an API's response) may nest before kiwi works on it.
 * JSON.parse reads any depth, but rendering a value (a violation's "got", the JSON a tool gets on
 * stdin, a transformed response) recurses: 40,000 levels overflowed the stack and ended the call as
 * an internal error. No real document comes near this.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * The deepest nesting of arrays and objects in a parsed JSON value: iterative (any depth), and
 * visiting containers only, through two plain stacks (~0.5 ms for a 300 KB document).
 */
export function nestingDepth(root: object): number {
  let deepest = 0;
  const values: object[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop()!;
    const depth = depths.pop()!;
    if (depth > deepest) deepest = depth;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (child !== null && typeof child === "object") {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in value) {
        const child: unknown = (value as Record<string, unknown>)[key];
        if (child !== null && typeof child === "object") {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return deepest;
}
