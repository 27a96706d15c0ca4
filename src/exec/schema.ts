// Run-time schema checks of exec: call parameters and parent->child child_schemas of a verified
// chain. The schemas here were validated when the chain was locked (kiwi lock runs the full check,
// meta-schema included), so exec compiles them without re-validating against the meta-schema
// (that alone costs ~55 ms). Patterns are still screened; nothing is fetched. Pure (ajv compiles
// in memory).
import type AjvType from "ajv";
import type { ErrorObject, ValidateFunction } from "ajv";
import type Ajv2020Type from "ajv/dist/2020";
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import { checkRegexSafety } from "../validate/regex-safety.ts";
import type { SchemaError } from "./params.ts";

let ajv2020: Ajv2020Type | undefined;
let ajv07: AjvType | undefined;
const compiled = new Map<string, ValidateFunction>();

/** Compiles a schema that passed kiwi's full check at lock time; throws E_CHECK_FAILED if it does not compile. */
export function compileLockedSchema(schema: unknown, subject: string): (value: unknown) => SchemaError[] {
  const key = JSON.stringify(schema);
  let fn = compiled.get(key);
  if (!fn) {
    const draft07 = typeof (schema as { $schema?: unknown })?.$schema === "string" && (schema as { $schema: string }).$schema.includes("draft-07");
    // Loaded on first use (require, not import): a warm exec whose verdicts are memoised never pays for ajv.
    const ajv = draft07
      ? (ajv07 ??= configure(new (require("ajv").default as typeof AjvType)(options())))
      : (ajv2020 ??= configure(new (require("ajv/dist/2020").default as typeof Ajv2020Type)(options())));
    try {
      fn = ajv.compile(schema as object);
    } catch (error) {
      throw new KiwiError("E_CHECK_FAILED", `${subject} does not compile: ${(error as Error).message}`, { hint: 'run "kiwi check" for the full report' });
    }
    compiled.set(key, fn);
  }
  const validate = fn;
  return (value) => (validate(value) ? [] : (validate.errors ?? []).map(toSchemaError));
}

function options() {
  return {
    allErrors: true,
    strict: false,
    logger: false as const,
    validateSchema: false,
    addUsedSchema: false,
    code: { regExp: safeRegExp },
  };
}

function safeRegExp(pattern: string, flags: string): RegExp {
  const verdict = checkRegexSafety(pattern);
  if (!verdict.ok) throw new Error(`unsafe pattern ${JSON.stringify(pattern)}: ${verdict.reason}`);
  return new RegExp(pattern, flags);
}
safeRegExp.code = "new RegExp";

function configure<T extends AjvType>(ajv: T): T {
  (require("ajv-formats").default as typeof import("ajv-formats").default)(ajv);
  return ajv;
}

function toSchemaError(e: ErrorObject): SchemaError {
  return { instancePath: e.instancePath, keyword: e.keyword, params: e.params as Record<string, unknown>, message: e.message };
}

/** The outcome of judging one child by its parent's child_schemas. */
export type ChildVerdict =
  | { ok: true; entry: number }
  | { ok: false; rule: "child-schema/no-match" | "child-schema/mismatch" | "child-schema/invalid" | "child-schema/missing"; message: string };

/**
 * Judges `child` by `parent.validation.child_schemas`: the first entry whose `match` keys all equal
 * the child's values applies and its schema judges the child's manifest as written; no matching
 * entry is a refusal. A parent without child_schemas is reported as `child-schema/missing`, which
 * the caller may treat as a warning.
 */
export function checkChildSchemas(parent: Pick<Tool, "id" | "childSchemas">, child: Pick<Tool, "id" | "type" | "doc">): ChildVerdict {
  const list = parent.childSchemas;
  if (list === undefined || list === null) return { ok: false, rule: "child-schema/missing", message: `${parent.id} declares no validation.child_schemas` };
  if (!Array.isArray(list)) return { ok: false, rule: "child-schema/invalid", message: `validation.child_schemas of ${parent.id} is not a list` };
  for (let i = 0; i < list.length; i++) {
    const entry = list[i] as { match?: unknown; schema?: unknown };
    if (typeof entry !== "object" || entry === null || typeof entry.match !== "object" || entry.match === null) {
      return { ok: false, rule: "child-schema/invalid", message: `validation.child_schemas/${i} of ${parent.id} has no match mapping` };
    }
    if (!matches(entry.match as Record<string, unknown>, child)) continue;
    const errors = compileLockedSchema(entry.schema ?? true, `validation.child_schemas/${i} of ${parent.id}`)(child.doc);
    if (errors.length === 0) return { ok: true, entry: i };
    const first = errors.slice(0, 3).map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword}`);
    return { ok: false, rule: "child-schema/mismatch", message: `${child.id} violates validation.child_schemas/${i} of ${parent.id}: ${first.join("; ")}` };
  }
  return { ok: false, rule: "child-schema/no-match", message: `no entry of ${parent.id}'s validation.child_schemas matches ${child.id} (type ${child.type || "none"})` };
}

/** `match` keys compare with the manifest as written; tool_type/type also match the model's type (both dialects). */
function matches(match: Record<string, unknown>, child: Pick<Tool, "type" | "doc">): boolean {
  return Object.entries(match).every(([key, want]) => {
    const have = child.doc[key] ?? (key === "tool_type" || key === "type" ? child.type : undefined);
    return JSON.stringify(have) === JSON.stringify(want);
  });
}
