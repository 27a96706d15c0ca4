// Compiles UNTRUSTED JSON Schemas (manifest child_schemas, parameter schemas, MCP inputSchemas)
// with ajv, safely: size and depth are bounded before compiling, no remote $ref is ever fetched,
// and every pattern is screened for catastrophic backtracking. Pure (ajv compiles in memory).
import Ajv, { type AnySchema, type ErrorObject, type ValidateFunction } from "ajv";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import validateDraft07 from "./meta/draft07.generated.ts";
import validateDraft2020 from "./meta/draft2020.generated.ts";
import { checkRegexSafety } from "./regex-safety.ts";

/** Deepest schema accepted (objects and arrays count as levels). */
export const MAX_SCHEMA_DEPTH = 64;
/** Most nodes (values of any kind) one schema may contain. */
export const MAX_SCHEMA_NODES = 20_000;
/** Compiled validators kept per process (a check of 1,000 tools has far fewer distinct schemas). */
const CACHE_LIMIT = 2_000;

const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";
const DRAFT_07 = "http://json-schema.org/draft-07/schema";

/** One reason a value does not satisfy a schema, as ajv reports it. */
export interface SchemaError {
  /** JSON pointer into the value ("" for the root). */
  instancePath: string;
  /** JSON pointer into the schema, e.g. `#/properties/url/format`. */
  schemaPath: string;
  keyword: string;
  message: string;
  params: Record<string, unknown>;
}

/** Why a schema could not be compiled; `pointer` is into the schema. */
export interface SchemaProblem {
  kind: "not-a-schema" | "too-large" | "too-deep" | "remote-ref" | "unsafe-pattern" | "unsupported-draft" | "invalid";
  message: string;
  pointer: string;
}

export interface CompiledSchema {
  ok: true;
  /** Returns every error (allErrors), or [] when the value satisfies the schema. */
  validate(value: unknown): SchemaError[];
  /** Which meta-schema judged it. */
  draft: "2020-12" | "draft-07";
}

export type CompileResult = CompiledSchema | { ok: false; problem: SchemaProblem };

export interface CompileOptions {
  /** Names the schema's owner in messages (e.g. `child_schemas of python_runtime`). */
  subject?: string;
}

const cache = new Map<string, CompileResult>();
// The same schema object (a tool's child_schemas, kiwi's own TypeBox schemas) compiles once even
// before its canonical text is built: walking a big schema per tool costs more than compiling it.
const byObject = new WeakMap<object, CompileResult>();
const byObjectTrusted = new WeakMap<object, CompileResult>();
let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;
let ajvTrusted: Ajv2020 | undefined;

/** Compiles an untrusted JSON Schema; never throws, never fetches, never hangs on a hostile pattern. */
export function compileUntrustedSchema(schema: unknown, options: CompileOptions = {}): CompileResult {
  const known = typeof schema === "object" && schema !== null ? byObject.get(schema) : undefined;
  if (known) return withSubject(known, options.subject);
  const result = compileUntrustedUncached(schema);
  if (typeof schema === "object" && schema !== null) byObject.set(schema, result);
  return withSubject(result, options.subject);
}

function compileUntrustedUncached(schema: unknown): CompileResult {
  const scan = scanSchema(schema);
  if (!scan.ok) return scan;
  const cached = cache.get(scan.key);
  if (cached) return cached;
  const result = compileScanned(schema as AnySchema, scan.draft);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(scan.key, result);
  return result;
}

/**
 * Compiles one of kiwi's OWN schemas (TypeBox manifest schemas): same bounds and no remote refs,
 * but patterns are not screened, since they are ours (the semver pattern would not pass the screen).
 */
export function compileTrustedSchema(schema: unknown): CompileResult {
  const isObj = typeof schema === "object" && schema !== null;
  const known = isObj ? byObjectTrusted.get(schema) : undefined;
  if (known) return known;
  const scan = scanSchema(schema, false);
  if (!scan.ok) return scan;
  const key = `trusted\n${scan.key}`;
  let result = cache.get(key);
  if (!result) {
    // Our own schemas are valid by construction: skipping meta-schema validation saves compiling
    // the 2020-12 meta-schema when no untrusted schema needs it.
    const ajv = (ajvTrusted ??= configure(new Ajv2020({ ...ajvOptions(), code: {} })));
    result = compileWith(ajv, schema as AnySchema, "2020-12");
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, result);
  }
  if (isObj) byObjectTrusted.set(schema, result);
  return result;
}

/** Renders ajv's error as one line: `/config/url must match format "uri"`. */
export function renderSchemaError(error: SchemaError): string {
  const at = error.instancePath === "" ? "the document" : error.instancePath;
  if (error.keyword === "additionalProperties") return `${at} has unknown property "${String(error.params.additionalProperty)}"`;
  if (error.keyword === "required") return `${at} is missing required property "${String(error.params.missingProperty)}"`;
  if (error.keyword === "enum") return `${at} must be one of ${JSON.stringify(error.params.allowedValues)}`;
  return `${at} ${error.message}`;
}

function withSubject(result: CompileResult, subject?: string): CompileResult {
  if (result.ok || !subject) return result;
  return { ok: false, problem: { ...result.problem, message: `${subject}: ${result.problem.message}` } };
}

type Scan = { ok: true; key: string; draft: "2020-12" | "draft-07" } | { ok: false; problem: SchemaProblem };

/**
 * Walks the schema once before ajv sees it: bounds depth and size, refuses any $ref that is not
 * local (`#...`), screens patterns, and builds the canonical text used as the cache key.
 */
function scanSchema(schema: unknown, screenPatterns = true): Scan {
  if (typeof schema !== "boolean" && !isObject(schema)) {
    return { ok: false, problem: { kind: "not-a-schema", message: "a JSON Schema must be an object or a boolean", pointer: "" } };
  }
  let draft: "2020-12" | "draft-07" = "2020-12";
  if (isObject(schema) && schema.$schema !== undefined) {
    const d = draftOf(schema.$schema);
    if (!d) {
      return {
        ok: false,
        problem: {
          kind: "unsupported-draft",
          message: `unsupported $schema ${JSON.stringify(schema.$schema)}; use ${DRAFT_2020} or ${DRAFT_07}#`,
          pointer: "/$schema",
        },
      };
    }
    draft = d;
  }
  let nodes = 0;
  let problem: SchemaProblem | undefined;
  // `parentKey` is the keyword this value sits under: below properties, patternProperties and $defs
  // the keys are names, not keywords; `data` marks instance data (const, enum, default, examples).
  const walk = (value: unknown, pointer: string, depth: number, parentKey: string | undefined, data = false): string => {
    if (problem) return "";
    if (++nodes > MAX_SCHEMA_NODES) {
      problem = { kind: "too-large", message: `the schema has more than ${MAX_SCHEMA_NODES} nodes`, pointer };
      return "";
    }
    if (depth > MAX_SCHEMA_DEPTH) {
      problem = { kind: "too-deep", message: `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, pointer };
      return "";
    }
    if (Array.isArray(value)) return `[${value.map((v, i) => walk(v, `${pointer}/${i}`, depth + 1, undefined, data)).join(",")}]`;
    if (!isObject(value)) return JSON.stringify(value) ?? "null";
    const keys = Object.keys(value).sort();
const keywordsHere = !data && parentKey !== "properties" && parentKey !== "patternProperties" && parentKey !== "$defs" && parentKey !== "definitions" && parentKey !== "dependentSchemas";
    const parts: string[] = [];
    for (const key of keys) {
      const child = value[key];
      const childPointer = `${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      if (keywordsHere && (key === "$ref" || key === "$dynamicRef" || key === "$recursiveRef") && typeof child === "string" && !child.startsWith("#")) {
        problem = { kind: "remote-ref", message: `${key} ${JSON.stringify(child)} is not local; kiwi never fetches schemas`, pointer: childPointer };
        return "";
      }
      if (screenPatterns && keywordsHere && key === "pattern" && typeof child === "string") {
        const verdict = checkRegexSafety(child);
        if (!verdict.ok) {
          problem = { kind: "unsafe-pattern", message: `pattern ${JSON.stringify(child)}: ${verdict.reason}`, pointer: childPointer };
          return "";
        }
      }
      if (screenPatterns && parentKey === "patternProperties") {
        const verdict = checkRegexSafety(key);
        if (!verdict.ok) {
          problem = { kind: "unsafe-pattern", message: `patternProperties key ${JSON.stringify(key)}: ${verdict.reason}`, pointer: childPointer };
          return "";
        }
      }
      const isData = data || (keywordsHere && DATA_KEYWORDS.has(key));
      parts.push(`${JSON.stringify(key)}:${walk(child, childPointer, depth + 1, keywordsHere ? key : undefined, isData)}`);
    }
    return `{${parts.join(",")}}`;
  };
  const key = walk(schema, "", 0, undefined);
  if (problem) return { ok: false, problem };
  return { ok: true, key: `${draft}\n${key}`, draft };
}

/** Keywords whose values are instance data, not schemas: a `$ref` key inside them is just data. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);

function draftOf(value: unknown): "2020-12" | "draft-07" | undefined {
  if (typeof value !== "string") return undefined;
  const v = value.replace(/^https?:\/\//, "").replace(/#$/, "");
  if (v === "json-schema.org/draft/2020-12/schema") return "2020-12";
  if (v === "json-schema.org/draft-07/schema") return "draft-07";
  return undefined;
}

/** A precompiled meta-schema validator (scripts/gen-schemas.ts), as ajv's standalone code exports it. */
type MetaValidator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

function compileScanned(schema: AnySchema, draft: "2020-12" | "draft-07"): CompileResult {
  // Meta-schema validation uses the precompiled validators; compiling the 2020-12 meta-schema at
  // run time would cost ~100 ms per process.
  const meta = (draft === "draft-07" ? validateDraft07 : validateDraft2020) as MetaValidator;
  if (!meta(schema)) {
    const first = meta.errors?.find((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf" && e.keyword !== "$dynamicRef") ?? meta.errors?.[0];
    const at = first?.instancePath ?? "";
    const detail = first ? `${at || "the schema"} ${first.message ?? first.keyword}${first.keyword === "enum" ? ` ${JSON.stringify(first.params.allowedValues)}` : ""}` : "it does not match the meta-schema";
    return { ok: false, problem: { kind: "invalid", message: `the schema is not a valid ${draft === "draft-07" ? "draft-07" : "2020-12"} JSON Schema: ${detail}`, pointer: at } };
  }
  const ajv = draft === "draft-07" ? (ajv07 ??= configure(new Ajv(ajvOptions()))) : (ajv2020 ??= configure(new Ajv2020(ajvOptions())));
  return compileWith(ajv, schema, draft);
}

function compileWith(ajv: Ajv, schema: AnySchema, draft: "2020-12" | "draft-07"): CompileResult {
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(schema);
  } catch (error) {
    const message = (error as Error).message.replace(/^schema is invalid: /, "");
    const kind = /unsafe pattern/.test(message) ? "unsafe-pattern" : /can't resolve reference|missing ref/i.test(message) ? "remote-ref" : "invalid";
    return { ok: false, problem: { kind, message: `the schema does not compile: ${message}`, pointer: "" } };
  }
  return {
    ok: true,
    draft,
    validate(value: unknown): SchemaError[] {
      if (fn(value)) return [];
      return (fn.errors ?? []).map(toSchemaError);
    },
  };
}

function ajvOptions() {
  return {
    allErrors: true,
    strict: false,
    logger: false as const,
    // Schemas with the same $id in different manifests must not collide in ajv's registry.
    addUsedSchema: false,
    // Every `pattern`/`patternProperties` regex passes the screen again here, in case a keyword
    // path the pre-scan does not know compiles one.
    code: { regExp: safeRegExp },
    // Nothing is ever loaded: a reference ajv cannot resolve locally fails the compile.
    loadSchema: undefined,
    // The meta-schema check ran already (precompiled, in compileScanned).
    validateSchema: false,
  };
}

function safeRegExp(pattern: string, flags: string): RegExp {
  const verdict = checkRegexSafety(pattern);
  if (!verdict.ok) throw new Error(`unsafe pattern ${JSON.stringify(pattern)}: ${verdict.reason}`);
  return new RegExp(pattern, flags);
}
safeRegExp.code = "new RegExp";

function configure<T extends Ajv>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

function toSchemaError(e: ErrorObject): SchemaError {
  return {
    instancePath: e.instancePath,
    schemaPath: e.schemaPath,
    keyword: e.keyword,
    message: e.message ?? e.keyword,
    params: e.params as Record<string, unknown>,
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
