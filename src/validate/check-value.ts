// kiwi's one hand-written checker of parameter values: the closed JSON Schema subset that
// validate/parameters.ts builds (an object of typed properties with the documented contracts).
// `kiwi check` judges declared defaults and enum members with it (checkValue) and `kiwi exec`
// judges a call's parameters with it (compileParamSchema). Why not ajv on these paths: a fresh kiwi
// process pays ~20-40 ms to load ajv and generate code for one schema, more than the whole exec
// overhead budget (issue 4: <= 15 ms), and compiling one schema per parameter dominated `kiwi check`
// on large trees. ajv still judges untrusted schemas (child_schemas, MCP schemas) and any schema
// outside this subset; test/validate/check-value.test.ts and test/validate/parameters.test.ts require the
// same verdicts as ajv. Formats come from ajv-formats itself, patterns run on the linear-time engine.
// Pure.
import { escapePointer } from "../integrity/canonical.ts";
import { isRecord, jsonEqual } from "../integrity/value.ts";
import { PARAMETER_FORMATS } from "../schema/parameter-fields.ts";

/** A JSON Schema object as kiwi builds it. */
export type JsonSchema = Record<string, unknown>;

/** The subset of an ajv ErrorObject kiwi reads (any validator producing this shape works). */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, any>;
  message?: string;
}

const ROOT_KEYS = new Set(["$schema", "type", "additionalProperties", "properties", "required"]);
const PROPERTY_KEYS = new Set(["type", "enum", "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "default", "description"]);
const TYPES = new Set(["string", "integer", "number", "boolean", "array", "object", "null"]);

type Check = (value: unknown, at: string, errors: SchemaError[]) => void;

/** A validator for a parameter schema, or undefined when the schema is outside the subset (use ajv). */
export function compileParamSchema(schema: Record<string, unknown>): ((value: unknown) => SchemaError[]) | undefined {
  if (Object.keys(schema).some((k) => !ROOT_KEYS.has(k))) return undefined;
  if (schema.type !== "object" || schema.additionalProperties !== false) return undefined;
  const props = schema.properties ?? {};
  if (!isRecord(props)) return undefined;
  const required = schema.required ?? [];
  if (!Array.isArray(required) || !required.every((r) => typeof r === "string")) return undefined;
  const checks = new Map<string, Check[]>();
  for (const [name, prop] of Object.entries(props)) {
    const compiled = isRecord(prop) ? compileProperty(prop, true) : undefined;
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

/**
 * Why a value breaks a property contract buildParametersSchema made, or undefined when it satisfies
 * it: the first of the checker's errors, worded for a finding about the declaration.
 */
export function checkValue(contract: JsonSchema, value: unknown): string | undefined {
  const checks = compileProperty(contract, false);
  if (!checks) throw new Error(`checkValue got a contract outside the parameter subset: ${JSON.stringify(contract)}`);
  const errors: SchemaError[] = [];
  for (const check of checks) check(value, "", errors);
  return errors[0] && findingText(errors[0]);
}

/** The declaration-finding wording of one checker error (ajv's wording where it reads well). */
function findingText(e: SchemaError): string {
  const p = e.params;
  switch (e.keyword) {
    case "type":
      return `must be ${p.type === "integer" || p.type === "array" || p.type === "object" ? "an" : "a"} ${p.type}`;
    case "enum":
      return `must be one of ${JSON.stringify(p.allowedValues)}`;
    case "minLength":
      return `must have at least ${p.limit} characters`;
    case "maxLength":
      return `must have at most ${p.limit} characters`;
    case "minItems":
      return `must have at least ${p.limit} items`;
    case "maxItems":
      return `must have at most ${p.limit} items`;
    default:
      return e.message ?? e.keyword;
  }
}

const isStr = (v: unknown) => typeof v === "string";
const isNum = (v: unknown) => typeof v === "number";

/** The numeric contracts, in the order their checks run; one table, not closures built per property. */
const LIMITS: readonly {
  key: string;
  applies: (v: unknown) => boolean;
  measure: (v: never) => number;
  fails: (n: number, lim: number) => boolean;
  message: (lim: number) => string;
  params: (lim: number) => Record<string, unknown>;
}[] = [
  { key: "minLength", applies: isStr, measure: (s: string) => codePoints(s), fails: (n, l) => n < l, message: (l) => `must NOT have fewer than ${l} characters`, params: (l) => ({ limit: l }) },
  { key: "maxLength", applies: isStr, measure: (s: string) => codePoints(s), fails: (n, l) => n > l, message: (l) => `must NOT have more than ${l} characters`, params: (l) => ({ limit: l }) },
  { key: "minItems", applies: Array.isArray, measure: (a: unknown[]) => a.length, fails: (n, l) => n < l, message: (l) => `must NOT have fewer than ${l} items`, params: (l) => ({ limit: l }) },
  { key: "maxItems", applies: Array.isArray, measure: (a: unknown[]) => a.length, fails: (n, l) => n > l, message: (l) => `must NOT have more than ${l} items`, params: (l) => ({ limit: l }) },
  { key: "minimum", applies: isNum, measure: (n: number) => n, fails: (n, l) => !(n >= l), message: (l) => `must be >= ${l}`, params: (l) => ({ comparison: ">=", limit: l }) },
  { key: "maximum", applies: isNum, measure: (n: number) => n, fails: (n, l) => !(n <= l), message: (l) => `must be <= ${l}`, params: (l) => ({ comparison: "<=", limit: l }) },
  { key: "exclusiveMinimum", applies: isNum, measure: (n: number) => n, fails: (n, l) => !(n > l), message: (l) => `must be > ${l}`, params: (l) => ({ comparison: ">", limit: l }) },
  { key: "exclusiveMaximum", applies: isNum, measure: (n: number) => n, fails: (n, l) => !(n < l), message: (l) => `must be < ${l}`, params: (l) => ({ comparison: "<", limit: l }) },
];

/**
 * The checks of one property, or undefined when it is outside the subset. With `screen`, a pattern
 * the regex screen refuses or the linear-time engine cannot run is outside it (exec then uses ajv,
 * which reports it); without, such a pattern fails every value, as a finding about it is made
 * where the declaration is judged.
 */
function compileProperty(prop: Record<string, unknown>, screen: boolean): Check[] | undefined {
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
  for (const { key, applies, measure, fails, message, params } of LIMITS) {
    const lim = prop[key];
    if (lim === undefined) continue;
    if (typeof lim !== "number" || !Number.isFinite(lim)) return undefined;
    checks.push((v, at, errors) => {
      if (applies(v) && fails(measure(v as never), lim)) errors.push({ instancePath: at, keyword: key, params: params(lim), message: message(lim) });
    });
  }
  if (prop.pattern !== undefined) {
    // The screen and the linear-time engine (re2js) load only for a schema with a pattern: a call
    // of a tool without one (nearly all) should not pay for evaluating them at start-up.
    const { checkRegexSafety } = require("./regex-safety.ts") as typeof import("./regex-safety.ts");
    const { linearRegExp } = require("./linear-regex.ts") as typeof import("./linear-regex.ts");
    if (typeof prop.pattern !== "string" || (screen && !checkRegexSafety(prop.pattern).ok)) return undefined;
    const pattern = prop.pattern;
    let re: { test: (s: string) => boolean };
    try {
      re = linearRegExp(pattern);
    } catch {
      if (screen) return undefined;
      re = { test: () => false };
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
  // ajv-formats builds its regular expressions when evaluated: loaded for a schema with a format only.
  const { fullFormats } = require("ajv-formats/dist/formats") as typeof import("ajv-formats/dist/formats");
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
