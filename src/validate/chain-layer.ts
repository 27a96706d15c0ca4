// Layer 4, the chain: every executor exists and satisfies its range, no cycles, bounded depth, the
// chain ends in a primitive, and every parent -> child pair satisfies the parent's
// validation.child_schemas (first entry whose `match` equals the child's values; its schema judges
// the child's link document, link-document.ts). Pure: remembered verdicts come through an injected
// memo (layer.ts ChildSchemaMemo; child-schema-memo-io.ts keeps one in the cache).
import type { Finding } from "../findings/verdict.ts";
import type { Tool } from "../manifest/model.ts";
import { resolveChain } from "../resolve/chain.ts";
import { findChildSchemaEntry } from "./child-match.ts";
import { linkDocument, linkPointerInFile } from "./link-document.ts";
import { toolFinding } from "../findings/finding.ts";
import { type CompiledSchema, type SchemaError, compileTrustedSchema, compileUntrustedSchema, renderSchemaError } from "./json-schema.ts";
import { type ChildSchemaMemo, type LayerContext, executorOf } from "./layer.ts";
import { isRecord } from "../integrity/value.ts";
import { sha256Hex } from "../integrity/digest.ts";
import { exactText } from "./exact-text.ts";

export { exactText } from "./exact-text.ts";

/** Chain findings for the tools in scope (whose own links, or whose chains further down, break). */
export function checkChains(scope: readonly Tool[], inScope: (tool: Tool) => boolean, ctx: LayerContext): Finding[] {
  const out: Finding[] = [];
  for (const tool of scope) {
    if (!tool.executor) continue;
    const result = resolveChain(ctx.index, tool);
    for (const found of result.findings) {
      const f = notInstalledExecutor(found, ctx);
      const owner = ctx.index.get(f.tool ?? "");
      if (f.tool === tool.id || (owner && inScope(owner))) {
        // Reported here or when the owner itself is checked (dedupe drops the repeat).
        if (f.tool === tool.id || f.rule === "chain/cycle") out.push(f);
        continue;
      }
      out.push(toolFinding(tool, "chain/broken", tool.pointers.executor ?? "/executor", `the executor chain of ${tool.id} breaks at ${f.tool}: ${f.message}`, `run "kiwi check ${f.file}" for details`));
    }
  }
  return out;
}

/**
 * A missing executor that is a remote tool tool.lock.json records but this checkout has not
 * installed (a fresh clone): "did you mean" would send the user the wrong way, kiwi install is the fix.
 */
function notInstalledExecutor(f: Finding, ctx: LayerContext): Finding {
  if (f.rule !== "chain/missing-executor" || !ctx.notInstalled || f.tool === undefined) return f;
  const missing = ctx.index.get(f.tool)?.executor?.id;
  if (missing === undefined || !ctx.notInstalled.has(missing)) return f;
  return { ...f, message: `executor "${missing}" of ${f.tool} is a remote tool this checkout has not installed`, hint: 'run "kiwi install": it places the remote tools tool.lock.json records, then checks and locks' };
}

/** A parent's child_schemas, compiled once per check. */
type ParentSchemas =
  | { kind: "missing" }
  | { kind: "invalid"; findings: Finding[] }
  | { kind: "ok"; entries: ChildEntry[] };

/** One child_schemas entry; its schema compiles the first time a child matches it (and the memo misses). */
interface ChildEntry {
  match: Record<string, unknown>;
  raw: unknown;
  index: number;
  compiled?: CompiledSchema | { ok: false; finding: Finding };
  /** Digest of the memo's salt, the trust the schema compiles with and its exact text; null when it has no text. */
  memoKey?: string | null;
}

/** child_schemas findings for every parent -> child pair where either side is in scope (`scope` lists those tools; `inScope` says whether one is). */
export function checkChildSchemas(all: readonly Tool[], scope: readonly Tool[], inScope: (tool: Tool) => boolean, ctx: LayerContext): Finding[] {
  const out: Finding[] = [];
  const parents = new Map<Tool, ParentSchemas>();
  const reported = new Set<Tool>();
  // A tool in scope has one of these ids, and so has its executor when that is in scope: a pair
  // whose ids are neither is out of scope without looking its executor up. For a staged check of
  // one tool this loop runs over the whole tree in the interpreter, where the lookup and the two
  // scope tests were three calls per tool.
  const scopeIds = new Set<string>();
  for (const tool of scope) scopeIds.add(tool.id);
  for (let i = 0; i < all.length; i++) {
    const child = all[i]!;
    const ref = child.executor;
    if (!ref || (!scopeIds.has(ref.id) && !scopeIds.has(child.id))) continue;
    const parent = executorOf(child, ctx);
    if (!parent || parent === child) continue;
    if (!inScope(child) && !inScope(parent)) continue;
    let schemas = parents.get(parent);
    if (!schemas) {
      schemas = compileParent(parent);
      parents.set(parent, schemas);
    }
    if (schemas.kind !== "ok") {
      // Missing or broken child_schemas are the parent's finding: reported when it is in scope.
      if (!reported.has(parent) && inScope(parent)) {
        reported.add(parent);
        if (schemas.kind === "invalid") out.push(...schemas.findings);
        else {
          out.push(
            toolFinding(parent, "child-schema/missing", parent.dialect === "magray" ? "" : "/validation", `${parent.id} runs other tools (${child.id}) but declares no validation.child_schemas`, `add validation.child_schemas: [{ match: { tool_type: ${child.type || "..."} }, schema: { ... } }]; --strict makes this an error`, ctx.strict ? "error" : undefined),
          );
        }
      }
      continue;
    }
    // Built once per child: the match reads it, then the entry's schema judges it.
    const doc = linkDocument(child);
    const entry = schemas.entries[findChildSchemaEntry(schemas.entries, child, doc)];
    const at = child.pointers.executor ?? "/executor";
    if (!entry) {
      const options = schemas.entries.map((e) => JSON.stringify(e.match)).join(", ");
      out.push(toolFinding(child, "child-schema/no-match", at, `no child_schemas entry of executor ${parent.id} matches ${child.id} (it accepts ${options || "nothing"})`, `use an executor meant for ${child.type ? `${child.type} tools` : "this kind of tool"}, or add a matching entry to ${parent.id}`));
      continue;
    }
    const judged = judgeChild(parent, entry, doc, ctx.childSchemaMemo);
    if (!judged.ok) {
      if (!reported.has(parent) && inScope(parent)) {
        reported.add(parent);
        out.push(judged.finding);
      }
      continue;
    }
    const seen = new Set<string>();
    for (const error of judged.errors) {
      const message = renderSchemaError(error);
      if (seen.has(message)) continue;
      seen.add(message);
      out.push(toolFinding(child, "child-schema/mismatch", linkPointerInFile(child, error.instancePath), `executor ${parent.id} rejects this manifest (child_schemas entry ${entry.index}): ${message}`, `fix the field, or the child_schemas of ${parent.id}`));
    }
  }
  return out;
}

/**
 * What the entry's schema says of the child's link document, or the entry's compile failure. A
 * remembered verdict is served without compiling: a key can only hold one once the same schema,
 * compiled the same way by the same kiwi, judged the same document. Failures are never remembered.
 */
function judgeChild(parent: Tool, entry: ChildEntry, doc: Record<string, unknown>, memo: ChildSchemaMemo | undefined): { ok: true; errors: readonly SchemaError[] } | { ok: false; finding: Finding } {
  // A built-in's schemas were compiled at build time: judging a child costs less than the memo's
  // key (the document's text and a sha256), so only a project's own executors go through the memo.
  const key = memo && parent.form !== "builtin" ? pairKey(memo, parent, entry, doc) : undefined;
  const known = key === undefined ? undefined : memo!.get(key);
  if (known) return { ok: true, errors: known };
  entry.compiled ??= compileEntry(parent, entry);
  if (!entry.compiled.ok) return entry.compiled;
  const errors = entry.compiled.validate(doc);
  if (key !== undefined) memo!.set(key, errors);
  return { ok: true, errors };
}

/** A project tool's own child_schemas, every entry compiled (children or not), for its invalid schemas. */
export function checkOwnChildSchemas(tool: Tool, memo?: ChildSchemaMemo): Finding[] {
  if (tool.form === "builtin" || tool.childSchemas === undefined || tool.childSchemas === null) return [];
  const schemas = compileParent(tool);
  if (schemas.kind === "invalid") return schemas.findings;
  if (schemas.kind !== "ok") return [];
  const out: Finding[] = [];
  for (const entry of schemas.entries) {
    // A schema that compiled before compiles again; one that did not is compiled for its finding.
    const key = memo ? entryKey(memo, tool, entry) : undefined;
    if (key !== undefined && memo!.get(key)) continue;
    const compiled = compileEntry(tool, entry);
    if (!compiled.ok) out.push(compiled.finding);
    else if (key !== undefined) memo!.set(key, []);
  }
  return out;
}

/** The memo key of an entry's schema (see ChildSchemaMemo), or undefined when it has no exact text. */
function entryKey(memo: ChildSchemaMemo, parent: Tool, entry: ChildEntry): string | undefined {
  if (entry.memoKey === undefined) {
    const text = exactText(entry.raw);
    entry.memoKey = text === undefined ? null : sha256Hex(`${memo.salt}\0${parent.form === "builtin" ? "trusted" : "untrusted"}\0${text}`);
  }
  return entry.memoKey ?? undefined;
}

function pairKey(memo: ChildSchemaMemo, parent: Tool, entry: ChildEntry, doc: unknown): string | undefined {
  const schema = entryKey(memo, parent, entry);
  const text = schema === undefined ? undefined : exactText(doc);
  return text === undefined ? undefined : sha256Hex(`${schema}\0${text}`);
}


/** Compiles an entry's schema: built-ins ship with kiwi (and are tested); a project's are untrusted. */
function compileEntry(parent: Tool, entry: ChildEntry): CompiledSchema | { ok: false; finding: Finding } {
  const compiled = parent.form === "builtin" ? compileTrustedSchema(entry.raw) : compileUntrustedSchema(entry.raw, { subject: `child_schemas entry ${entry.index} of ${parent.id}` });
  if (compiled.ok) return compiled;
  const base = parent.pointers.childSchemas ?? "/validation/child_schemas";
  return { ok: false, finding: toolFinding(parent, "child-schema/invalid", `${base}/${entry.index}/schema${compiled.problem.pointer}`, compiled.problem.message, "fix the schema; kiwi compiles child_schemas without fetching anything and rejects patterns that can backtrack catastrophically") };
}

function compileParent(parent: Tool): ParentSchemas {
  const list = parent.childSchemas;
  if (list === undefined || list === null) return { kind: "missing" };
  const base = parent.pointers.childSchemas ?? "/validation/child_schemas";
  const bad = (pointer: string, message: string): ParentSchemas => ({
    kind: "invalid",
    findings: [toolFinding(parent, "child-schema/invalid", pointer, message, "each entry is { match: { field: value, ... }, schema: <JSON Schema> }")],
  });
  if (!Array.isArray(list)) return bad(base, "validation.child_schemas must be a list");
  const entries: ChildEntry[] = [];
  for (const [i, entry] of list.entries()) {
    if (!isRecord(entry) || !isRecord(entry.match) || entry.schema === undefined) return bad(`${base}/${i}`, `child_schemas entry ${i} needs a match mapping and a schema`);
    entries.push({ match: entry.match, raw: entry.schema, index: i });
  }
  return { kind: "ok", entries };
}
