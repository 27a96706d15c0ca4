// Call parameters: `--param k=v` coerced to the declared type, the JSON sources merged, defaults
// applied, and every schema violation reported at once as `params/<pointer>: <rule text> (got <v>)`.
// Pure: sources arrive as text; reading stdin and files is the command's job (params-io.ts).
import { KiwiError } from "../errors.ts";
import { escapePointer, unescapePointer } from "../integrity/canonical.ts";
import { suggest } from "../resolve/suggest.ts";
import { MAX_JSON_DEPTH, isRecord, nestingDepth } from "../integrity/value.ts";

import type { JsonSchema, SchemaError } from "../validate/check-value.ts";

export type { JsonSchema, SchemaError } from "../validate/check-value.ts";

/** One violation: where (JSON pointer below the params object), which rule, what was given. */
export interface ParamViolation {
  /** `/priority`, `/tags/2`; `` for the params object itself. */
  pointer: string;
  /** The JSON Schema keyword that failed: `maximum`, `required`, `format`, `additionalProperties`… */
  rule: string;
  message: string;
  /** The offending value (absent for a missing parameter). */
  value?: unknown;
}

/** Where the parameters of one call come from; later sources override earlier ones key by key. */
export interface ParamSources {
  /** JSON text read from stdin (lowest precedence). */
  stdin?: { text: string };
  /** JSON text of `--params-file`, with its path for messages. */
  file?: { path: string; text: string };
  /** `--params '<json>'`, or stdin's text for `--params -` and `--params-file -`. */
  json?: string;
  /** Where `json` came from, as messages name it (default `--params`): stdin's text is not on the command line. */
  jsonFrom?: string;
  /** Every `--param k=v` in command-line order (highest precedence). */
  pairs?: string[];
}

/** Merges every source into one params object, coercing `--param` values to the declared types. */
export function mergeParamSources(sources: ParamSources, schema: JsonSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const assign = (obj: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(obj)) setOwn(out, k, v);
  };
  if (sources.stdin && sources.stdin.text.trim() !== "") assign(parseParamsJson(sources.stdin.text, "the JSON on stdin"));
  if (sources.file) assign(parseParamsJson(sources.file.text, `--params-file ${sources.file.path}`));
  if (sources.json !== undefined) assign(parseParamsJson(sources.json, sources.jsonFrom ?? "--params"));
  const seen = new Set<string>();
  for (const pair of sources.pairs ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      throw new KiwiError("E_USAGE", `--param ${JSON.stringify(pair)} is not of the form name=value`, {
        hint: "write --param name=value (repeat --param for each parameter)",
      });
    }
    const name = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const prop = propertyOf(schema, name);
    if (typesOf(prop)[0] === "array" && !raw.trimStart().startsWith("[")) {
      // Repeating an array parameter appends: --param tag=a --param tag=b gives ["a","b"].
      const item = coerceParam(raw, isRecord(prop?.items) ? prop.items : undefined, name);
      const prev = seen.has(name) && Array.isArray(out[name]) ? (out[name] as unknown[]) : [];
      setOwn(out, name, [...prev, item]);
    } else {
      if (seen.has(name)) {
        throw new KiwiError("E_USAGE", `--param ${name} is given more than once`, { hint: `give ${name} once, or pass a JSON array if it is a list` });
      }
      setOwn(out, name, coerceParam(raw, prop, name));
    }
    seen.add(name);
  }
  return out;
}

/**
 * JSON.parse, refusing an integer past 2^53: JavaScript would round 12345678901234567890 to
 * 12345678901234567000 and kiwi would pass that on in its place. (The reviver's third argument
 * gives each number's source text, ES2025.) And refusing nesting past MAX_JSON_DEPTH.
 */
function parseExactJson(text: string, source: string): unknown {
  const value = parseExactJsonAnyDepth(text, source);
  // Each level takes at least two characters ([ and ]): a shorter text cannot be too deep.
  if (text.length > 2 * MAX_JSON_DEPTH && value !== null && typeof value === "object" && nestingDepth(value) > MAX_JSON_DEPTH) {
    throw new KiwiError("E_INPUT_INVALID", `${source} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`, {
      hint: "pass flatter parameters: kiwi renders, validates and hands on parameters level by level, and stops here rather than overflow its stack",
      details: { maxDepth: MAX_JSON_DEPTH },
    });
  }
  return value;
}

function parseExactJsonAnyDepth(text: string, source: string): unknown {
  // Only an integer written with 16 digits or more can be past 2^53 (9007199254740991 has 16), so
  // a text without such a run parses as it is. The reviver is a call per value: ~20 ms for a 300 KB
  // document of 25,000 values against ~1.4 ms without (and 0.15 against 0.06 ms for 100 numbers).
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined && /^-?\d+$/.test(context.source)) {
      throw new KiwiError("E_INPUT_INVALID", `${source} holds the integer ${context.source}, which is past 2^53: it would be passed on as ${value}`, {
        hint: "pass it as a string, or as an integer between -9007199254740991 and 9007199254740991",
      });
    }
    return value;
  });
}

/** Parses one JSON params source; it must be an object. A leading byte order mark is skipped, as in a manifest. */
export function parseParamsJson(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseExactJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, source);
  } catch (error) {
    if (error instanceof KiwiError) throw error;
    throw new KiwiError("E_INPUT_INVALID", `${source} is not valid JSON: ${(error as Error).message}`, {
      hint: `pass a JSON object such as '{"city": "Paris"}'`,
    });
  }
  if (!isRecord(value)) {
    throw new KiwiError("E_INPUT_INVALID", `${source} must be a JSON object of parameters (got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value})`, {
      hint: `pass a JSON object such as '{"city": "Paris"}'`,
    });
  }
  return value;
}



/**
 * Turns `--param` text into the declared type: the first type in the property's `type` that accepts
 * the text wins; text no type accepts stays a string so validation reports it with the value.
 */
export function coerceParam(raw: string, prop: JsonSchema | undefined, name?: string): unknown {
  const types = typesOf(prop);
  if (types.length === 0 && Array.isArray(prop?.enum)) {
    const hit = (prop.enum as unknown[]).find((v) => typeof v !== "object" && String(v) === raw);
    return hit === undefined ? raw : hit;
  }
  for (const type of types) {
    switch (type) {
      case "string":
        return raw;
      case "integer":
        if (isIntegerText(raw.trim()) && Number.isSafeInteger(Number(raw))) return Number(raw);
        break;
      case "number":
        if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw.trim()) && Number.isFinite(Number(raw))) return Number(raw);
        break;
      case "boolean": {
        const b = BOOLEAN_WORDS[raw.trim().toLowerCase()];
        if (b !== undefined) return b;
        break;
      }
      case "null":
        if (raw.trim() === "null") return null;
        break;
      case "array":
      case "object": {
        const t = raw.trim();
        if (t.startsWith(type === "array" ? "[" : "{")) {
          try {
            return parseExactJson(t, name === undefined ? "--param" : `--param ${name}`);
          } catch (error) {
            if (error instanceof KiwiError) throw error;
            /* stays a string: validation names the type it should have been */
          }
        }
        break;
      }
    }
  }
  return raw;
}

/**
 * `/^[-+]?\d+$/.test(text)`, without the regular expression: an integer --param is the commonest
 * call a remembered launch replays, and the first regular expression a process runs costs it
 * ~0.07 ms (the engine's set-up); the replay runs no other.
 */
function isIntegerText(text: string): boolean {
  const start = text.startsWith("-") || text.startsWith("+") ? 1 : 0;
  if (text.length === start) return false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, false: false, yes: true, no: false, on: true, off: false, "1": true, "0": false };

/** Fills declared defaults for parameters the call left out (top level, as the schema declares them). */
export function applyParamDefaults(params: Record<string, unknown>, schema: JsonSchema | undefined): Record<string, unknown> {
  const props = isRecord(schema?.properties) ? schema.properties : {};
  const out: Record<string, unknown> = { ...params };
  for (const [name, prop] of Object.entries(props)) {
    if (!Object.hasOwn(out, name) && isRecord(prop) && Object.hasOwn(prop, "default")) setOwn(out, name, structuredClone(prop.default));
  }
  return out;
}

/** Maps validator errors onto violations with pointers, rules and the offending values. */
export function toViolations(errors: readonly SchemaError[], params: unknown, schema: JsonSchema | undefined): ParamViolation[] {
  const declared = isRecord(schema?.properties) ? Object.keys(schema.properties) : [];
  const out: ParamViolation[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    // anyOf/oneOf wrappers only repeat what their branches said.
    if (e.keyword === "anyOf" || e.keyword === "oneOf" || e.keyword === "if") continue;
    let pointer = e.instancePath;
    let value: unknown = valueAt(params, pointer);
    let message = e.message ?? `violates ${e.keyword}`;
    switch (e.keyword) {
      case "required":
        pointer = `${pointer}/${escapePointer(String(e.params.missingProperty))}`;
        value = undefined;
        message = "is required";
        break;
      case "additionalProperties": {
        const name = String(e.params.additionalProperty);
        pointer = `${pointer}/${escapePointer(name)}`;
        value = valueAt(params, pointer);
        const near = pointer.lastIndexOf("/") === 0 ? suggest(name, declared) : undefined;
        message = `is not a declared parameter${near ? ` (did you mean "${near}"?)` : declared.length && pointer.lastIndexOf("/") === 0 ? ` (declared: ${declared.join(", ")})` : ""}`;
        break;
      }
      case "enum":
        message = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
        break;
      case "const":
        message = `must be ${JSON.stringify(e.params.allowedValue)}`;
        break;
      case "format":
        message = `must be a valid ${e.params.format}`;
        break;
      case "pattern":
        message = `must match the pattern ${JSON.stringify(e.params.pattern)}`;
        break;
      case "minLength":
        message = e.params.limit === 1 ? "must not be empty" : `must be at least ${e.params.limit} characters long`;
        break;
      case "maxLength":
        message = `must be at most ${e.params.limit} characters long`;
        break;
      case "minItems":
        message = e.params.limit === 1 ? "must not be empty" : `must have at least ${e.params.limit} items`;
        break;
      case "minProperties":
        if (e.params.limit === 1) message = "must not be empty";
        break;
      case "type":
        message = `must be ${Array.isArray(e.params.type) ? e.params.type.join(" or ") : e.params.type}`;
        break;
    }
    const key = `${pointer}\u0000${e.keyword}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value === undefined ? { pointer, rule: e.keyword, message } : { pointer, rule: e.keyword, message, value });
  }
  return out.sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0));
}

/** `params/priority: must be <= 100 (got 150)`. */
export function renderViolation(v: ParamViolation): string {
  const got = Object.hasOwn(v, "value") ? ` (got ${renderGot(v.value)})` : "";
  return `params${v.pointer}: ${v.message}${got}`;
}

/** Throws E_PARAMS_INVALID listing every violation (nothing runs). */
export function assertNoViolations(violations: readonly ParamViolation[], toolId: string, subject = toolId): void {
  if (violations.length === 0) return;
  const lines = violations.map((v) => `  ${renderViolation(v)}`);
  throw new KiwiError("E_PARAMS_INVALID", `${violations.length} parameter${violations.length === 1 ? "" : "s"} of ${subject} ${violations.length === 1 ? "is" : "are"} invalid:\n${lines.join("\n")}`, {
    hint: `"kiwi show ${toolId}" lists the parameters it takes; "kiwi exec ${toolId} --dry-run" checks a call without running it`,
    details: { tool: toolId, violations },
  });
}

function renderGot(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The value at a JSON pointer, or undefined. */
export function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const key = unescapePointer(raw);
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isRecord(node) && Object.hasOwn(node, key)) node = node[key];
    else return undefined;
  }
  return node;
}

function propertyOf(schema: JsonSchema | undefined, name: string): JsonSchema | undefined {
  const props = isRecord(schema?.properties) ? schema.properties : undefined;
  const prop = props && Object.hasOwn(props, name) ? props[name] : undefined;
  return isRecord(prop) ? prop : undefined;
}

function typesOf(prop: JsonSchema | undefined): string[] {
  const t = prop?.type;
  return typeof t === "string" ? [t] : Array.isArray(t) ? t.filter((x): x is string => typeof x === "string") : [];
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

