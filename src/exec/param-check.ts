// A direct validator for the closed JSON Schema subset that schema/parameters.ts produces (an
// object of typed properties with the documented contracts). Why not ajv on this path: a fresh
// kiwi process pays ~20-40 ms to load ajv and generate code for one schema, more than the whole
// exec overhead budget (issue 4: <= 15 ms). Formats come from ajv-formats itself; errors have
// ajv's shape; test/exec/param-check.test.ts runs both validators over the same table and
// requires the same verdicts. Any schema outside the subset returns undefined: use ajv. Pure.
import { fullFormats } from "ajv-formats/dist/formats";
import { isRecord, jsonEqual } from "../integrity/value.ts";
import { PARAMETER_FORMATS } from "../schema/check-value.ts";
import { linearRegExp } from "../validate/linear-regex.ts";
import { checkRegexSafety } from "../validate/regex-safety.ts";
import type { SchemaError } from "./params.ts";
import { escapePointer } from "../integrity/canonical.ts";

const ROOT_KEYS = new Set(["$schema", "type", "additionalProperties", "properties", "required"]);
const PROPERTY_KEYS = new Set(["type", "enum", "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "default", "description"]);
const TYPES = new Set(["string", "integer", "number", "boolean", "array", "object", "null"]);

type Check = (value: unknown, at: string, errors: SchemaError[]) => void;

/** A validator for a parameter schema, or undefined when the schema is outside the subset. */
export function compileParamSchema(schema: Record<string, unknown>): ((value: unknown) => SchemaError[]) | undefined {
  if (Object.keys(schema).some((k) => !ROOT_KEYS.has(k))) return undefined;
  if (schema.type !== "object" || schema.additionalProperties !== false) return undefined;
  const props = schema.properties ?? {};
  if (!isRecord(props)) return undefined;
  const required = schema.required ?? [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === "string")) return undefined;
  const checks = new Map<string, Check[]>();
  for (const [name, prop] of Object.entries(props)) {
    const compiled = isRecord(prop) ? compileProperty(prop) : undefined;
    if (!compiled) return undefined;
    checks.set(name, compiled);
  }
  return (value) => {
    const errors: SchemaError[] = [];
    if (!isRecord(value)) {
      errors.push({ instancePath: "", keyword: "type", params: { type: "object" }, message: "must be object" });
      return errors;
    }
    for (const name of required as string[]) {
      if (!Object.hasOwn(value, name)) errors.push({ instancePath: "", keyword: "required", params: { missingProperty: name }, message: `must have required property '${name}'` });
    }
    for (const key of Object.keys(value)) {
      const own = checks.get(key);
      if (!own) {
        errors.push({ instancePath: "", keyword: "additionalProperties", params: { additionalProperty: key }, message: "must NOT have additional properties" });
        continue;
      }
      const at = `/${escapePointer(key)}`;
      for (const check of own) check(value[key], at, errors);
    }
    return errors;
  };
}

function compileProperty(prop: Record<string, unknown>): Check[] | undefined {
  if (Object.keys(prop).some((k) => !PROPERTY_KEYS.has(k))) return undefined;
  const checks: Check[] = [];
  const type = prop.type;
  if (type !== undefined) {
    if (typeof type !== "string" || !TYPES.has(type)) return undefined;
    checks.push((v, at, errors) => {
      if (!hasType(v, type)) errors.push({ instancePath: at, keyword: "type", params: { type }, message: `must be ${type}` });
    });
  }
  if (prop.enum !== undefined) {
    if (!Array.isArray(prop.enum)) return undefined;
    const allowed = prop.enum;
    checks.push((v, at, errors) => {
      if (!allowed.some((a) => jsonEqual(a, v))) errors.push({ instancePath: at, keyword: "enum", params: { allowedValues: allowed }, message: "must be equal to one of the allowed values" });
    });
  }
  const limit = (key: string, applies: (v: unknown) => boolean, measure: (v: never) => number, fails: (n: number, lim: number) => boolean, message: (lim: number) => string, params: (lim: number) => Record<string, unknown>) => {
    const lim = prop[key];
    if (lim === undefined) return true;
    if (typeof lim !== "number" || !Number.isFinite(lim)) return false;
    checks.push((v, at, errors) => {
      if (applies(v) && fails(measure(v as never), lim)) errors.push({ instancePath: at, keyword: key, params: params(lim), message: message(lim) });
    });
    return true;
  };
  const isStr = (v: unknown) => typeof v === "string";
  const isNum = (v: unknown) => typeof v === "number";
  const length = (s: string) => codePoints(s);
  const ok = [
    limit("minLength", isStr, length, (n, l) => n < l, (l) => `must NOT have fewer than ${l} characters`, (l) => ({ limit: l })),
    limit("maxLength", isStr, length, (n, l) => n > l, (l) => `must NOT have more than ${l} characters`, (l) => ({ limit: l })),
    limit("minItems", Array.isArray, (a: unknown[]) => a.length, (n, l) => n < l, (l) => `must NOT have fewer than ${l} items`, (l) => ({ limit: l })),
    limit("maxItems", Array.isArray, (a: unknown[]) => a.length, (n, l) => n > l, (l) => `must NOT have more than ${l} items`, (l) => ({ limit: l })),
    limit("minimum", isNum, (n: number) => n, (n, l) => !(n >= l), (l) => `must be >= ${l}`, (l) => ({ comparison: ">=", limit: l })),
    limit("maximum", isNum, (n: number) => n, (n, l) => !(n <= l), (l) => `must be <= ${l}`, (l) => ({ comparison: "<=", limit: l })),
    limit("exclusiveMinimum", isNum, (n: number) => n, (n, l) => !(n > l), (l) => `must be > ${l}`, (l) => ({ comparison: ">", limit: l })),
    limit("exclusiveMaximum", isNum, (n: number) => n, (n, l) => !(n < l), (l) => `must be < ${l}`, (l) => ({ comparison: "<", limit: l })),
  ];
  if (ok.includes(false)) return undefined;
  if (prop.pattern !== undefined) {
    if (typeof prop.pattern !== "string" || !checkRegexSafety(prop.pattern).ok) return undefined;
    const pattern = prop.pattern;
    let re: { test: (s: string) => boolean };
    try {
      re = linearRegExp(pattern);
    } catch {
      return undefined; // outside what the direct validator runs: ajv (on the same engine) reports it
    }
    checks.push((v, at, errors) => {
      if (typeof v === "string" && !re.test(v)) errors.push({ instancePath: at, keyword: "pattern", params: { pattern }, message: `must match pattern "${pattern}"` });
    });
  }
  if (prop.format !== undefined) {
    const format = prop.format;
    const test = typeof format === "string" ? formatTest(format) : undefined;
    if (!test) return undefined;
    checks.push((v, at, errors) => {
      if (typeof v === "string" && !test(v)) errors.push({ instancePath: at, keyword: "format", params: { format }, message: `must match format "${format}"` });
    });
  }
  return checks;
}

/** The string test of an ajv-formats "full" format, as addFormats(ajv) installs it. */
function formatTest(name: string): ((s: string) => boolean) | undefined {
  if (!(PARAMETER_FORMATS as readonly string[]).includes(name)) return undefined;
  const def = (fullFormats as Record<string, unknown>)[name];
  const validate = isRecord(def) && "validate" in def ? (def as { validate: unknown }).validate : def;
  if (validate instanceof RegExp) return (s) => validate.test(s);
  if (typeof validate === "function") return (s) => Boolean((validate as (s: string) => boolean)(s));
  return undefined;
}

/** JSON Schema type membership, as ajv decides it. */
function hasType(v: unknown, type: string): boolean {
  switch (type) {
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "integer":
      return typeof v === "number" && Number.isFinite(v) && v % 1 === 0;
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v);
    case "object":
      return isRecord(v);
    default:
      return v === null;
  }
}

/** Length in Unicode code points (ajv's ucs2length: a surrogate pair counts once). */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

/** Structural equality of JSON values (key order ignored), as ajv's enum compares. */
