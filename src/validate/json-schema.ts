// Compiles UNTRUSTED JSON Schemas (manifest child_schemas, parameter schemas, MCP inputSchemas)
// with ajv, safely: size and depth are bounded before compiling, no remote $ref is ever fetched,
// and every pattern is screened for catastrophic backtracking. Pure (ajv compiles in memory).
import type Ajv from "ajv";
import type { AnySchema, ErrorObject, ValidateFunction } from "ajv";
import type Ajv2020 from "ajv/dist/2020";
import { linearRegExp } from "./linear-regex.ts";
import { checkRegexSafety } from "./regex-safety.ts";
import { type SchemaProblem, scanSchema } from "./schema-scan.ts";

export { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES } from "./schema-scan.ts";

/** Compiled validators kept per process (a check of 1,000 tools has far fewer distinct schemas). */
const CACHE_LIMIT = 2_000;


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

// Why a schema could not be compiled (`pointer` is into the schema): defined beside the scan.
export type { SchemaProblem } from "./schema-scan.ts";

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

// ajv and the precompiled meta-validators load on first compile (require, not import): a warm
// `kiwi exec`, whose verdicts are memoised, never needs them, and they cost its start-up dearly.
const newAjv2020 = (opts: object): Ajv2020 => configure(new (require("ajv/dist/2020").default as typeof Ajv2020)(opts));
const newAjv07 = (opts: object): Ajv => configure(new (require("ajv").default as typeof Ajv)(opts));
const metaValidator = (draft: "2020-12" | "draft-07"): MetaValidator =>
  (draft === "draft-07" ? require("./meta/draft07.generated.ts") : require("./meta/draft2020.generated.ts")).default as MetaValidator;

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
    // The built-ins' child_schemas were compiled at build time (scripts/gen-schemas.ts, with these
    // options): judging the children of a built-in runtime loads no ajv and compiles nothing.
    const built = (require("./meta/builtin-child-schemas.generated.ts") as { BY_KEY: Map<string, MetaValidator> }).BY_KEY.get(scan.key);
    // Our own schemas are valid by construction: skipping meta-schema validation saves compiling
    // the 2020-12 meta-schema when no untrusted schema needs it.
    result = built ? validatorResult(built, "2020-12") : compileWith((ajvTrusted ??= newAjv2020(trustedAjvOptions())), schema as AnySchema, "2020-12");
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, result);
  }
  if (isObj) byObjectTrusted.set(schema, result);
  return result;
}

/**
 * Compiles a schema that passed the full check when its tool was locked (kiwi exec, for child
 * schemas and parameter schemas): the same bounds and pattern screen, but no meta-schema pass,
 * which the lock already made and which costs a cold process ~55 ms.
 */
export function compileLockedSchema(schema: unknown): CompileResult {
  const scan = scanSchema(schema);
  if (!scan.ok) return scan;
  const key = `locked\n${scan.key}`;
  let result = cache.get(key);
  if (!result) {
    result = compileWith(ajvFor(scan.draft), schema as AnySchema, scan.draft);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, result);
  }
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

/** A precompiled meta-schema validator (scripts/gen-schemas.ts), as ajv's standalone code exports it. */
type MetaValidator = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

function compileScanned(schema: AnySchema, draft: "2020-12" | "draft-07"): CompileResult {
  // Meta-schema validation uses the precompiled validators; compiling the 2020-12 meta-schema at
  // run time would cost ~100 ms per process.
  const meta = metaValidator(draft);
  if (!meta(schema)) {
    const first = meta.errors?.find((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf" && e.keyword !== "$dynamicRef") ?? meta.errors?.[0];
    const at = first?.instancePath ?? "";
    const detail = first ? `${at || "the schema"} ${first.message ?? first.keyword}${first.keyword === "enum" ? ` ${JSON.stringify(first.params.allowedValues)}` : ""}` : "it does not match the meta-schema";
    return { ok: false, problem: { kind: "invalid", message: `the schema is not a valid ${draft === "draft-07" ? "draft-07" : "2020-12"} JSON Schema: ${detail}`, pointer: at } };
  }
  return compileWith(ajvFor(draft), schema, draft);
}

function ajvFor(draft: "2020-12" | "draft-07"): Ajv {
  return draft === "draft-07" ? (ajv07 ??= newAjv07(ajvOptions())) : (ajv2020 ??= newAjv2020(ajvOptions()));
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
  return validatorResult(fn, draft);
}

/** A compiled schema around a validate function ajv compiled, now or at build time. */
function validatorResult(fn: MetaValidator, draft: "2020-12" | "draft-07"): CompiledSchema {
  return {
    ok: true,
    draft,
    validate(value: unknown): SchemaError[] {
      if (fn(value)) return [];
      return (fn.errors ?? []).map(toSchemaError);
    },
  };
}

/**
 * The options kiwi's own schemas compile with: ajvOptions() with ajv's own RegExp (their patterns
 * are ours, and the generated validators of the built-ins' child_schemas must use it too).
 */
export function trustedAjvOptions() {
  return { ...ajvOptions(), code: {} };
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

/** ajv's pattern engine: screened, then run on RE2 (linear-regex.ts), never on backtracking RegExp. */
function safeRegExp(pattern: string, _flags: string): { test: (s: string) => boolean } {
  const verdict = checkRegexSafety(pattern);
  if (!verdict.ok) throw new Error(`unsafe pattern ${JSON.stringify(pattern)}: ${verdict.reason}`);
  return linearRegExp(pattern);
}

function configure<T extends Ajv>(ajv: T): T {
  (require("ajv-formats").default as typeof import("ajv-formats").default)(ajv);
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
