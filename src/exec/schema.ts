// Run-time schema checks of exec: call parameters and parent->child child_schemas of a verified
// chain. Both the entry that applies and how its schema compiles are the validator's own rules
// (validate/child-match.ts, validate/json-schema.ts), so what passed at lock time passes here.
// Pure (ajv compiles in memory).
import { KiwiError } from "../errors.ts";
import type { Tool } from "../manifest/model.ts";
import { findChildSchemaEntry } from "../validate/child-match.ts";
import { type LinkSource, linkDocument } from "../validate/link-document.ts";
import type { SchemaError } from "./params.ts";

/** Compiles a schema that passed kiwi's full check at lock time; throws E_CHECK_FAILED if it does not compile. */
export function compileLockedSchema(schema: unknown, subject: string): (value: unknown) => SchemaError[] {
  // Loaded on first use: a warm exec finds its verdicts in the memo and never compiles a schema.
  const { compileLockedSchema: compileLocked } = require("../validate/json-schema.ts") as typeof import("../validate/json-schema.ts");
  const compiled = compileLocked(schema);
  if (!compiled.ok) throw new KiwiError("E_CHECK_FAILED", `${subject} does not compile: ${compiled.problem.message}`, { hint: 'run "kiwi check" for the full report' });
  return compiled.validate;
}

/** The outcome of judging one child by its parent's child_schemas. */
export type ChildVerdict =
  | { ok: true; entry: number }
  | { ok: false; rule: "child-schema/no-match" | "child-schema/mismatch" | "child-schema/invalid" | "child-schema/missing"; message: string };

/**
 * Judges `child` by `parent.validation.child_schemas`: the first entry whose `match` keys all equal
 * the child's values applies and its schema judges the child's link document; no matching
 * entry is a refusal. A parent without child_schemas is reported as `child-schema/missing`, which
 * the caller may treat as a warning.
 */
export function checkChildSchemas(parent: Pick<Tool, "id" | "childSchemas">, child: LinkSource): ChildVerdict {
  const list = parent.childSchemas;
  if (list === undefined || list === null) return { ok: false, rule: "child-schema/missing", message: `${parent.id} declares no validation.child_schemas` };
  if (!Array.isArray(list)) return { ok: false, rule: "child-schema/invalid", message: `validation.child_schemas of ${parent.id} is not a list` };
  const entries: { match: Record<string, unknown>; schema?: unknown }[] = [];
  for (let i = 0; i < list.length; i++) {
    const entry = list[i] as { match?: unknown; schema?: unknown };
    if (typeof entry !== "object" || entry === null || typeof entry.match !== "object" || entry.match === null || Array.isArray(entry.match)) {
      return { ok: false, rule: "child-schema/invalid", message: `validation.child_schemas/${i} of ${parent.id} has no match mapping` };
    }
    entries.push({ match: entry.match as Record<string, unknown>, schema: entry.schema });
  }
  const i = findChildSchemaEntry(entries, child);
  if (i !== -1) {
    const errors = compileLockedSchema(entries[i]!.schema ?? true, `validation.child_schemas/${i} of ${parent.id}`)(linkDocument(child));
    if (errors.length === 0) return { ok: true, entry: i };
    const first = errors.slice(0, 3).map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword}`);
    return { ok: false, rule: "child-schema/mismatch", message: `${child.id} violates validation.child_schemas/${i} of ${parent.id}: ${first.join("; ")}` };
  }
  return { ok: false, rule: "child-schema/no-match", message: `no entry of ${parent.id}'s validation.child_schemas matches ${child.id} (type ${child.type || "none"})` };
}
