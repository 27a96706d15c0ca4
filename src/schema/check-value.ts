// Checks a value against the small property contracts buildParametersSchema makes (type, enum,
// lengths, bounds, pattern, format), without compiling a schema per parameter. Pure.
import { fullFormats } from "ajv-formats/dist/formats";
import { isRecord, jsonEqual } from "../integrity/value.ts";
import { linearRegExp } from "../validate/linear-regex.ts";

/** Parameter types, as JSON Schema names them. */
export const PARAMETER_TYPES = ["string", "integer", "number", "boolean", "array", "object"] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

/** String formats a parameter may declare (checked as ajv-formats checks them, here and in exec/param-check.ts). */
export const PARAMETER_FORMATS = ["uuid", "email", "uri", "date-time"] as const;

/** A JSON Schema object as kiwi builds it. */
export type JsonSchema = Record<string, unknown>;

/**
 * Why a value breaks a property contract built above, or undefined when it satisfies it. The
 * contracts are small and known, so this direct check replaces an ajv compile per parameter (which
 * dominated \`kiwi check\` on large trees); test/schema/parameters.test.ts compares it with ajv.
 */
export function checkValue(contract: JsonSchema, value: unknown): string | undefined {
  const type = contract.type as ParameterType;
  const ok =
    type === "string" ? typeof value === "string"
    : type === "integer" ? typeof value === "number" && Number.isInteger(value)
    : type === "number" ? typeof value === "number" && Number.isFinite(value)
    : type === "boolean" ? typeof value === "boolean"
    : type === "array" ? Array.isArray(value)
    : isRecord(value);
  if (!ok) return `must be ${type === "integer" || type === "array" || type === "object" ? "an" : "a"} ${type}`;
  if (Array.isArray(contract.enum) && !contract.enum.some((e) => jsonEqual(e, value))) return `must be one of ${JSON.stringify(contract.enum)}`;
  const n = (k: string) => (typeof contract[k] === "number" ? (contract[k] as number) : undefined);
  if (typeof value === "string") {
    const length = [...value].length;
    if (n("minLength") !== undefined && length < n("minLength")!) return `must have at least ${n("minLength")} characters`;
    if (n("maxLength") !== undefined && length > n("maxLength")!) return `must have at most ${n("maxLength")} characters`;
    if (typeof contract.pattern === "string" && !matches(contract.pattern, value)) return `must match pattern "${contract.pattern}"`;
    if (typeof contract.format === "string" && !matchesFormat(contract.format, value)) return `must match format "${contract.format}"`;
  }
  if (typeof value === "number") {
    if (n("minimum") !== undefined && value < n("minimum")!) return `must be >= ${n("minimum")}`;
    if (n("maximum") !== undefined && value > n("maximum")!) return `must be <= ${n("maximum")}`;
    if (n("exclusiveMinimum") !== undefined && value <= n("exclusiveMinimum")!) return `must be > ${n("exclusiveMinimum")}`;
    if (n("exclusiveMaximum") !== undefined && value >= n("exclusiveMaximum")!) return `must be < ${n("exclusiveMaximum")}`;
  }
  if (Array.isArray(value)) {
    if (n("minItems") !== undefined && value.length < n("minItems")!) return `must have at least ${n("minItems")} items`;
    if (n("maxItems") !== undefined && value.length > n("maxItems")!) return `must have at most ${n("maxItems")} items`;
  }
  return undefined;
}

/** A pattern test on the linear-time engine; a pattern it cannot run fails the value (buildParametersSchema reports the pattern itself). */
function matches(pattern: string, value: string): boolean {
  try {
    return linearRegExp(pattern).test(value);
  } catch {
    return false;
  }
}

/** The same format checks ajv-formats applies at run time. */
function matchesFormat(format: string, value: string): boolean {
  const f = (fullFormats as Record<string, unknown>)[format];
  if (f instanceof RegExp) return f.test(value);
  if (typeof f === "function") return (f as (v: string) => boolean)(value);
  if (f && typeof f === "object" && typeof (f as { validate?: unknown }).validate === "function") return (f as { validate: (v: string) => boolean }).validate(value);
  return true;
}
