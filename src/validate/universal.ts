// Layer 1, universal rules: the manifest's shape (TypeBox schema of its dialect), tool id, type,
// version, executor presence, reserved keys. Duplicate ids are a tree-level rule in check-project.ts. Pure.
import type { TSchema } from "@sinclair/typebox";
import type { ValueError } from "@sinclair/typebox/errors";
import type { Finding } from "../findings/verdict.ts";
import { renderCanonicalJson, unescapePointer } from "../integrity/canonical.ts";
import { type CanonicalValue, Float } from "../integrity/value.ts";
import { aliasConflicts } from "../manifest/aliases.ts";
import { BUILTIN_IDS } from "../manifest/builtins.ts";
import { EXECUTORLESS_TYPES, PRIMITIVES, type Tool, isRemoteTool } from "../manifest/model.ts";
import { parseExecutorRef, ryeExecutorRef } from "../manifest/normalize.ts";
import { isSemver } from "../resolve/chain.ts";
import { suggest } from "../resolve/suggest.ts";
import { OWNED_POINTERS, TOOL_ID, TOOL_TYPES } from "../schema/vocabulary.ts";
import { toolFinding } from "../findings/finding.ts";
import { seg } from "./layer.ts";
import { isRecord } from "../integrity/value.ts";
import { kiwiManifestCheck, magrayManifestCheck } from "./meta/manifest-check.generated.ts";

/** Keys that reach an object's prototype machinery in JavaScript; never legitimate in a manifest. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

const MAGRAY_TYPES = ["wasm", "native", "script"];

/** Universal findings for one tool; returns early when the document is not a mapping at all. */
export function checkUniversal(tool: Tool): Finding[] {
  const m = tool.manifest;
  if (typeof m !== "object" || m === null || Array.isArray(m) || m instanceof Float) {
    const what = Array.isArray(m) ? "a list" : m === null ? "empty (null)" : `a ${typeof m === "object" ? "number" : typeof m}`;
    return [toolFinding(tool, "universal/not-a-mapping", "", `the manifest is ${what}, not a mapping of fields`, "write the manifest as `key: value` lines (tool_id, tool_type, version, ...)")];
  }
  const out: Finding[] = [];
  reservedKeys(tool, tool.doc, [], out, 0);
  shape(tool, out);
  identity(tool, out);
  if (tool.dialect === "kiwi") aliases(tool, out);
  return out;
}

/** Two spellings of one field (manifest/aliases.ts, executor and executor_id) that disagree. */
function aliases(tool: Tool, out: Finding[]): void {
  for (const { group, kept, other } of aliasConflicts(tool.doc)) {
    out.push(toolFinding(tool, "universal/alias-conflict", other, `${other.slice(1).replaceAll("/", ".")} disagrees with ${kept.slice(1).replaceAll("/", ".")}, which kiwi reads (${group.origin})`, `keep one spelling: ${kept.slice(1).replaceAll("/", ".")}`));
  }
  const { executor, executor_id: executorId } = tool.doc;
  if (typeof executor === "string" && typeof executorId === "string" && ryeExecutorRef(executorId).id !== parseExecutorRef(executor).id) {
    out.push(toolFinding(tool, "universal/alias-conflict", "/executor_id", `executor_id "${executorId}" names another tool than executor "${executor}", which kiwi reads`, "keep one spelling: executor"));
  }
}

/** Walks every key; `path` is the way down, spelled as a pointer only for a finding (nearly never). */
function reservedKeys(tool: Tool, value: unknown, path: (string | number)[], out: Finding[], depth: number): void {
  if (depth > 300) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item !== "object" || item === null) continue;
      path.push(i);
      reservedKeys(tool, item, path, out, depth + 1);
      path.pop();
    }
    return;
  }
  if (!isRecord(value)) return;
  for (const key of Object.keys(value)) {
    if (RESERVED_KEYS.has(key)) {
      const at = `${path.map((p) => `/${seg(p)}`).join("")}/${seg(key)}`;
      out.push(toolFinding(tool, "security/reserved-key", at, `the key "${key}" is reserved: it reaches JavaScript's prototype machinery`, "rename the key"));
    }
    const child = value[key];
    if (typeof child !== "object" || child === null) continue;
    path.push(key);
    reservedKeys(tool, child, path, out, depth + 1);
    path.pop();
  }
}

/**
 * TypeBox's compiled check of each dialect's schema, generated at build time (scripts/gen-schemas.ts;
 * a test fails when it drifts from the schema): compiling it at run time cost a check 2-5 ms per
 * dialect, most of a staged check's universal layer. It checks 1,000 manifests in a few milliseconds.
 */
const SHAPE_CHECKS: Record<"kiwi" | "magray", (value: unknown) => boolean> = { kiwi: kiwiManifestCheck, magray: magrayManifestCheck };

/** Judges the document against its dialect's TypeBox schema, leaving owned fields to their rules. */
function shape(tool: Tool, out: Finding[]): void {
  if (SHAPE_CHECKS[tool.dialect](tool.doc)) return;
  const owned = OWNED_POINTERS[tool.dialect];
  const isOwned = (p: string) => owned.some((o) => (o.endsWith("/") ? p.startsWith(o) : p === o || p.startsWith(`${o}/`)));
  const reported = new Set<string>();
  // The errors of a document that failed: TypeBox's interpreter, as TypeCheck.Errors runs it. It and
  // the schemas load only for a manifest that failed (building the schemas costs ~0.7 ms of start-up).
  const { Errors, ValueErrorType } = require("@sinclair/typebox/errors") as typeof import("@sinclair/typebox/errors");
  const { manifestSchemaOf } = require("../schema/manifest.ts") as typeof import("../schema/manifest.ts");
  for (const found of Errors(manifestSchemaOf(tool.dialect), [], tool.doc)) {
    const error = narrowUnion(found, ValueErrorType.Union);
    const at = error.path;
    if (isOwned(at) || reported.has(at)) continue;
    reported.add(at);
    const parent = at.slice(0, at.lastIndexOf("/"));
    const key = unescapePointer(at.slice(at.lastIndexOf("/") + 1));
    if (error.type === ValueErrorType.ObjectAdditionalProperties) {
      if (RESERVED_KEYS.has(key)) continue;
      // Knowledge and directive front matter often carries the author's own fields.
      if (tool.form === "markdown" && parent === "") continue;
      const known = knownKeys(manifestSchemaOf(tool.dialect), parent);
      const near = suggest(key, known);
      out.push(toolFinding(tool, "universal/unknown-field", at, `unknown field "${key}"${parent ? ` in ${parent}` : ""}`, near ? `did you mean "${near}"?` : `known fields: ${known.join(", ")}`));
    } else if (error.type === ValueErrorType.ObjectRequiredProperty) {
      out.push(toolFinding(tool, "universal/field-type", parent, `required field "${key}" is missing`, `add ${key}: to ${parent === "" ? "the manifest" : parent}`));
    } else {
      out.push(toolFinding(tool, "universal/field-type", at, `${at} must be ${describe(error.schema)}`, `write ${at.slice(1).replaceAll("/", ".")} as ${describe(error.schema)}${typeHint(error.schema)}`));
    }
  }
}

/**
 * A value no variant of a union accepts, narrowed to the variant whose shape it has: a list with
 * one bad item (`filesystem: [execute]`) is that item not being one of "read", "write", not the
 * list failing to be "a list or a mapping or null".
 */
function narrowUnion(error: ValueError, unionType: number): ValueError {
  if (error.type !== unionType) return error;
  for (const variant of error.errors) {
    const first = variant.First();
    if (first && first.path.startsWith(`${error.path}/`)) return narrowUnion(first, unionType);
  }
  return error;
}

/** How a value of that type is written in YAML, where a user most often slips (a version read as a number). */
function typeHint(schema: TSchema): string {
  const type = (schema as Record<string, unknown>).type;
  if (type === "string") return ' (in quotes when YAML would read it as something else: "1.0", "yes", "2026-01-01")';
  if (type === "boolean") return " (YAML 1.2 reads yes, no, on and off as text)";
  if (type === "array") return " (one `- item` per line, or [a, b])";
  if (type === "object") return " (key: value lines indented below it)";
  return "";
}

/** What a schema accepts, in words: "a string", "an integer", "one of \"wasm\", \"native\"". */
function describe(schema: TSchema): string {
  const s = schema as Record<string, unknown>;
  if (s.const !== undefined) return JSON.stringify(s.const);
  const options = s.anyOf as TSchema[] | undefined;
  if (options) {
    if (options.every((o) => (o as Record<string, unknown>).const !== undefined)) return `one of ${options.map((o) => JSON.stringify((o as Record<string, unknown>).const)).join(", ")}`;
    return [...new Set(options.map(describe))].join(" or ");
  }
  const type = s.type;
  const words: Record<string, string> = { object: "a mapping", array: "a list", string: "a string", integer: "an integer", number: "a number", boolean: "true or false", null: "null" };
  if (typeof type === "string") {
    const base = words[type] ?? type;
    if (type === "string" && typeof s.pattern === "string") return `${base} matching ${s.pattern}`;
    if (type === "string" && s.minLength === 1) return "a non-empty string";
    if (type === "integer" || type === "number") {
      const bounds = [s.minimum !== undefined ? `>= ${s.minimum}` : "", s.maximum !== undefined ? `<= ${s.maximum}` : ""].filter(Boolean).join(" and ");
      return bounds ? `${base} ${bounds}` : base;
    }
    return base;
  }
  return "valid";
}

/** The property names the manifest schema allows at an instance path (for "did you mean"). */
function knownKeys(schema: unknown, instancePath: string): string[] {
  let node = schema as Record<string, unknown> | undefined;
  for (const part of instancePath.split("/").slice(1)) {
    const props = objectSchema(node)?.properties as Record<string, unknown> | undefined;
    node = props?.[unescapePointer(part)] as Record<string, unknown> | undefined;
  }
  return Object.keys((objectSchema(node)?.properties as object | undefined) ?? {});
}

function objectSchema(node: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!node) return undefined;
  if (node.properties) return node;
  const options = (node.anyOf ?? node.oneOf) as Record<string, unknown>[] | undefined;
  return options?.find((o) => o.properties);
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function identity(tool: Tool, out: Finding[]): void {
  const doc = tool.doc;
  const magray = tool.dialect === "magray";
  const idField = magray ? "name" : "tool_id";
  const idAt = tool.pointers.id ?? `/${idField}`;
  if (idField in doc && typeof doc[idField] !== "string") {
    out.push(toolFinding(tool, "universal/id-format", idAt, `${idField} must be a string`, `write ${idField} as 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter: ${idField}: weather`));
  } else if (magray) {
    // magray.ts judges a magray name: missing, its format, and whether kiwi can use it as an id.
  } else if (!TOOL_ID.test(tool.id)) {
    const from = idField in doc ? `${idField} "${tool.id}"` : `the tool id "${tool.id}" (taken from the file name)`;
    out.push(toolFinding(tool, "universal/id-format", idField in doc ? idAt : "", `${from} is not a valid tool id`, `use 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter${idField in doc ? "" : `, or set ${idField}`}`));
  }
  // A project tool replaces a built-in of the same id (a runtime, say), but never a primitive:
  // every chain ends in one, and a project copy could redefine what it accepts.
  if (tool.form !== "builtin" && (PRIMITIVES as readonly string[]).includes(tool.id)) {
    out.push(toolFinding(tool, "universal/shadows-primitive", idField in doc ? idAt : "", `the tool id "${tool.id}" is kiwi's built-in primitive; a project tool may not replace it`, `rename the tool (set ${idField}); chains end in kiwi's own ${tool.id}`));
  } else if (isRemoteTool(tool) && BUILTIN_IDS.includes(tool.id)) {
    // A runtime the project writes itself is its own choice; one pulled from a registry would
    // take over the chain of every project tool that runs on the built-in.
    out.push(toolFinding(tool, "universal/shadows-primitive", idField in doc ? idAt : "", `the remote tool "${tool.id}" takes the id of kiwi's built-in ${tool.id}; a remote tool may not replace a built-in (it would run every tool on ${tool.id})`, `delete .ai/tools/.remote/${tool.id}/ and its entries in tool.lock.json, then run "kiwi lock"; to use a runtime from a registry, publish it under an id of its own and name that id as the executor`));
  }

  const typeField = magray ? "type" : "tool_type";
  const typeAt = tool.pointers.type ?? `/${typeField}`;
  const allowed: readonly string[] = magray ? MAGRAY_TYPES : TOOL_TYPES;
  let typeKnown = false;
  if (!(typeField in doc)) {
    // rye-os tools take their kind from their folder (.ai/tools -> "tool"), which does not say
    // which kiwi type they are.
    const rye = typeof doc.executor_id === "string" ? "; a rye-os tool's folder does not say which kiwi type it is" : "";
    out.push(toolFinding(tool, "universal/type-unknown", "", `${typeField} is missing${rye}`, `add ${typeField}: one of ${allowed.join(", ")}`));
  } else if (typeof doc[typeField] !== "string" || !allowed.includes(tool.type)) {
    const near = typeof doc[typeField] === "string" ? suggest(tool.type, allowed) : undefined;
    const hint = tool.type === "mcp" ? 'rye-os\'s "mcp" is either an mcp_server (a server to start or reach) or an mcp_tool (one tool on a server): write the one you mean' : near ? `did you mean "${near}"?` : `use one of ${allowed.join(", ")}`;
    out.push(toolFinding(tool, "universal/type-unknown", typeAt, `${typeField} ${JSON.stringify(doc[typeField])} is not a known tool type`, hint));
  } else typeKnown = true;

  const versionAt = tool.pointers.version ?? "/version";
  if (magray && typeof doc.version !== "number") {
    // magray.ts: missing, empty and magray's own X.Y.Z format.
  } else if (!("version" in doc)) out.push(toolFinding(tool, "universal/version-semver", "", "version is missing", "add version: 1.0.0"));
  else if (typeof doc.version !== "string") {
    // Shown as written (1.0 stays 1.0), from the lossless value.
    const written = isRecord(tool.manifest) ? renderCanonicalJson((tool.manifest as Record<string, CanonicalValue>).version ?? null) : JSON.stringify(doc.version);
    out.push(toolFinding(tool, "universal/version-semver", versionAt, `version ${written} is a ${typeof doc.version}, not a semantic version string`, `quote it: version: "${semverHint(written)}"`));
  } else if (!isSemver(doc.version)) {
    out.push(toolFinding(tool, "universal/version-semver", versionAt, `version "${doc.version}" is not a semantic version`, "use MAJOR.MINOR.PATCH, e.g. 1.0.0 or 2.1.0-rc.1"));
  }

  if (!typeKnown) return;
  const executorless = (EXECUTORLESS_TYPES as readonly string[]).includes(tool.type);
  if (magray) {
    if (!tool.executor && tool.type === "script") {
      const entry = typeof doc.entry_point === "string" ? doc.entry_point : "";
      out.push(toolFinding(tool, "universal/executor-required", tool.pointers.entrypoint ?? "/entry_point", `kiwi has no runtime for the script entry point "${entry}"`, "use a .py, .sh, .js, .mjs, .cjs or .ts entry point"));
    }
    return;
  }
  // rye-os writes the executor as executor_id (normalize.ts reads it when executor is absent).
  const written = doc.executor === undefined && typeof doc.executor_id === "string" ? doc.executor_id : doc.executor;
  if (written !== undefined && written !== null && typeof written !== "string") {
    out.push(toolFinding(tool, "universal/field-type", "/executor", "executor must be a tool id string (optionally id@range) or null", "write the id of the tool it runs on: executor: python_runtime (or python_runtime@^1)"));
  } else if (executorless && typeof written === "string") {
    out.push(toolFinding(tool, "universal/executor-forbidden", "/executor", `${article(tool.type)} tool runs nothing, so its executor must be null`, "remove the executor line or set executor: null"));
  } else if (!executorless && (typeof written !== "string" || written.trim() === "" || !tool.executor?.id)) {
    out.push(toolFinding(tool, "universal/executor-required", "executor" in doc ? "/executor" : "", `${article(tool.type)} tool needs an executor`, hintForExecutor(tool.type)));
  }
}

/** `1.0` -> `1.0.0`, `2` -> `2.0.0`: the quoted version the author most likely meant. */
function semverHint(written: string): string {
  const parts = /^\d+(\.\d+){0,2}$/.test(written) ? written.split(".") : ["1", "0", "0"];
  while (parts.length < 3) parts.push("0");
  return parts.join(".");
}

function hintForExecutor(type: string): string {
  switch (type) {
    case "script":
      return "set executor to a runtime, e.g. python_runtime or bash_runtime";
    case "api":
      return "set executor: http_client";
    case "runtime":
    case "mcp_server":
      return "set executor: subprocess (or http_client for a URL)";
    case "mcp_tool":
      return "set executor to the mcp_server tool that serves it";
    default:
      return "set executor to the tool that runs this one";
  }
}
