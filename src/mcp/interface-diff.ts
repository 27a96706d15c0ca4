// The drift diff between a pinned interface and a live one: per component added/removed/changed,
// per field with a unified text diff, each with a severity. Pure: two listings in, a diff out.
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import { Float, type CanonicalValue } from "../integrity/value.ts";
import { LIST_KINDS, type ListKey, type WireListing, type WireObject, withoutMeta } from "./listing.ts";
import { renderVisible } from "./visible.ts";

/** security: a model could be steered differently; notice: the interface changed; info: metadata only. */
export type DiffSeverity = "security" | "notice" | "info";
export const SEVERITY_ORDER: readonly DiffSeverity[] = ["info", "notice", "security"];

export type ComponentKind = "server" | "instructions" | "tool" | "prompt" | "resource" | "resource_template" | "skill";

export interface FieldChange {
  field: string;
  severity: DiffSeverity;
  /** Unified diff of the field's text (strings as lines, other values as sorted, indented JSON). */
  patch: string;
}

export interface ComponentChange {
  kind: ComponentKind;
  /** Tool/prompt name, resource uri, template uriTemplate; "" for the server and instructions. */
  name: string;
  change: "added" | "removed" | "changed";
  severity: DiffSeverity;
  fields: FieldChange[];
}

export interface InterfaceDiff {
  changes: ComponentChange[];
  /** The highest severity among the changes, or null when nothing changed. */
  severity: DiffSeverity | null;
  /** Set when the pin was taken under another sandbox mode than this run (a likely cause of the change). */
  sandbox?: { pinned: string; live: string };
  /** Set when an HTTP server was pinned under another credential than this run presented (lists may differ by authorization). */
  credential?: { pinned: string; live: string };
}

/**
 * Fields whose change alters what a model is told or allowed to do: descriptions, schemas,
 * annotations (readOnlyHint, destructiveHint…), titles, arguments, instructions and identities.
 */
const SECURITY_FIELDS: ReadonlySet<string> = new Set([
  "description",
  "title",
  "inputSchema",
  "outputSchema",
  "annotations",
  "arguments",
  "instructions",
  "name",
  "uri",
  "uriTemplate",
  // Skills: what the model is told (frontmatter) and the files an approval binds to.
  "frontmatter",
  "resources",
]);

const KIND_OF: Record<ListKey, ComponentKind> = { tools: "tool", prompts: "prompt", resources: "resource", resourceTemplates: "resource_template", skills: "skill" };
const ID_OF = Object.fromEntries(LIST_KINDS.map((k) => [k.key, k.id])) as Record<ListKey, string>;

/** A diff larger than this many characters per side is summarised instead of computed. */
const MAX_DIFF_CHARS = 1_000_000;

/** Compares a pinned listing with a live one. */
export function diffListings(pinned: WireListing, live: WireListing): InterfaceDiff {
  const changes: ComponentChange[] = [];
  const server = diffServer(pinned, live);
  if (server) changes.push(server);
  const before = typeof pinned.instructions === "string" ? pinned.instructions : "";
  const after = typeof live.instructions === "string" ? live.instructions : "";
  if (before !== after) {
    changes.push({
      kind: "instructions",
      name: "",
      change: before === "" ? "added" : after === "" ? "removed" : "changed",
      severity: "security",
      fields: [{ field: "instructions", severity: "security", patch: patchOf("instructions", renderFieldText(before), renderFieldText(after)) }],
    });
  }
  for (const { key } of LIST_KINDS) changes.push(...diffList(key, pinned[key], live[key]));
  const severity = changes.reduce<DiffSeverity | null>((max, c) => (max === null || rank(c.severity) > rank(max) ? c.severity : max), null);
  return { changes, severity };
}

function diffServer(pinned: WireListing, live: WireListing): ComponentChange | undefined {
  const fields: FieldChange[] = [];
  const name = (l: WireListing) => (typeof l.serverInfo?.name === "string" ? l.serverInfo.name : "");
  const version = (l: WireListing) => (typeof l.serverInfo?.version === "string" ? l.serverInfo.version : "");
  // A server that now calls itself something else must not pass as the pinned one.
  if (name(pinned) !== name(live)) fields.push({ field: "serverInfo.name", severity: "security", patch: patchOf("serverInfo.name", renderFieldText(name(pinned)), renderFieldText(name(live))) });
  if (version(pinned) !== version(live)) fields.push({ field: "serverInfo.version", severity: "info", patch: patchOf("serverInfo.version", renderFieldText(version(pinned)), renderFieldText(version(live))) });
  // A 2026-07-28 server's discover result: supported revisions are informational, capabilities a notice.
  const before = pinned.discover ?? {};
  const after = live.discover ?? {};
  if (pinned.discover !== undefined || live.discover !== undefined) {
    for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
      const a = before[key];
      const b = after[key];
      if (a !== undefined && b !== undefined && renderCanonicalJson(a) === renderCanonicalJson(b)) continue;
      fields.push({
        field: `discover.${key}`,
        severity: key === "supportedVersions" ? "info" : "notice",
        patch: patchOf(`server/discover/${key}`, a === undefined ? "" : renderFieldText(a), b === undefined ? "" : renderFieldText(b)),
      });
    }
  }
  if (fields.length === 0) return undefined;
  return { kind: "server", name: "", change: "changed", severity: maxSeverity(fields), fields };
}

function diffList(key: ListKey, pinned: WireObject[], live: WireObject[]): ComponentChange[] {
  const kind = KIND_OF[key];
  const before = indexById(key, pinned);
  const after = indexById(key, live);
  const out: ComponentChange[] = [];
  for (const [id, item] of before) {
    const next = after.get(id);
    if (!next) {
      out.push({ kind, name: id, change: "removed", severity: "notice", fields: wholeFields(kind, id, item, "removed") });
      continue;
    }
    const fields = diffFields(kind, id, item, next);
    if (fields.length > 0) out.push({ kind, name: id, change: "changed", severity: maxSeverity(fields), fields });
  }
  for (const [id, item] of after) {
    // A new tool is new power handed to the model: security-relevant.
    if (!before.has(id)) out.push({ kind, name: id, change: "added", severity: "security", fields: wholeFields(kind, id, item, "added") });
  }
  return out;
}

function indexById(key: ListKey, items: WireObject[]): Map<string, WireObject> {
  const map = new Map<string, WireObject>();
  for (const item of items) {
    const base = String(item[ID_OF[key]] ?? "");
    let id = base;
    for (let n = 2; map.has(id); n++) id = `${base}#${n}`; // duplicates stay distinct
    map.set(id, withoutMeta(item));
  }
  return map;
}

function diffFields(kind: ComponentKind, id: string, before: WireObject, after: WireObject): FieldChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: FieldChange[] = [];
  for (const field of keys) {
    const a = before[field];
    const b = after[field];
    if (a !== undefined && b !== undefined && renderCanonicalJson(a) === renderCanonicalJson(b)) continue;
    out.push({
      field,
      severity: SECURITY_FIELDS.has(field) ? "security" : "notice",
      patch: patchOf(`${kind}/${id}/${field}`, a === undefined ? "" : renderFieldText(a), b === undefined ? "" : renderFieldText(b)),
    });
  }
  return out;
}

function wholeFields(kind: ComponentKind, id: string, item: WireObject, change: "added" | "removed"): FieldChange[] {
  const text = renderFieldText(item);
  const severity: DiffSeverity = change === "added" ? "security" : "notice";
  return [{ field: "*", severity, patch: patchOf(`${kind}/${id}`, change === "added" ? "" : text, change === "added" ? text : "") }];
}

/** Strings as their lines; other values as sorted, indented JSON that keeps 3 vs 3.0. */
export function renderFieldText(value: CanonicalValue): string {
  return typeof value === "string" ? renderVisible(value, { keepNewlines: true }) : renderPretty(value, "");
}

/** Sorted-key, 2-space JSON with lossless numbers and hidden characters made visible. */
export function renderPretty(value: CanonicalValue, indent: string): string {
  if (value === null || typeof value !== "object" || value instanceof Float) {
    return typeof value === "string" ? renderVisible(JSON.stringify(value)) : renderCanonicalJson(value);
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => inner + renderPretty(v, inner)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return "{}";
  const obj = value as WireObject;
  return `{\n${keys.map((k) => `${inner}${renderVisible(JSON.stringify(k))}: ${renderPretty(obj[k]!, inner)}`).join(",\n")}\n${indent}}`;
}

/** A unified diff with file headers `a/<label>` (pinned) and `b/<label>` (live). */
export function patchOf(label: string, before: string, after: string): string {
  if (before.length > MAX_DIFF_CHARS || after.length > MAX_DIFF_CHARS) {
    return `--- a/${label}\tpinned\n+++ b/${label}\tlive\n(too large to diff: ${before.length} → ${after.length} characters)\n`;
  }
  const patch = createTwoFilesPatch(`a/${label}`, `b/${label}`, withNewline(before), withNewline(after), "pinned", "live", {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
    maxEditLength: 20_000,
  });
  return patch ?? `--- a/${label}\tpinned\n+++ b/${label}\tlive\n(too many edits to show line by line)\n`;
}

function withNewline(text: string): string {
  return text === "" || text.endsWith("\n") ? text : `${text}\n`;
}

function rank(severity: DiffSeverity): number {
  return SEVERITY_ORDER.indexOf(severity);
}

function maxSeverity(fields: FieldChange[]): DiffSeverity {
  return fields.reduce<DiffSeverity>((max, f) => (rank(f.severity) > rank(max) ? f.severity : max), "info");
}

