// The display form of tool.lock.json: an explicit key order, 2-space indent, one tool per block,
// one file entry per line, a trailing newline. Pure. Writing the same lockfile twice gives the
// same bytes because nothing here depends on insertion order, the clock or the machine.
import { compareCodePoints, inCodePointOrder, renderCanonicalJson } from "../integrity/canonical.ts";
import { Float, type CanonicalValue } from "../integrity/value.ts";
import { type LockedFile, type LockedTool, type Lockfile, type McpPin, type RemoteTool } from "../schema/lockfile.ts";
import { MCP_PIN_KEYS, REMOTE_KEYS } from "../schema/vocabulary.ts";

/** Top-level keys, in the order they are written (README: "Lockfile format"). */
export const LOCKFILE_KEYS = ["lockfileVersion", "tools", "remote", "dependencies", "mcp_servers"] as const;

/** Keys of one tool entry, in the order they are written. */
export const TOOL_KEYS = ["version", "type", "source", "executor", "integrity", "manifest_digest", "files"] as const satisfies readonly (keyof LockedTool)[];

/** Keys of one file entry, in the order they are written (all on one line). */
export const FILE_KEYS = ["path", "sha256", "is_executable"] as const satisfies readonly (keyof LockedFile)[];

/** Renders a lockfile as the exact bytes kiwi writes. */
export function renderLockfile(lock: Lockfile): string {
  const out: string[] = [];
  out.push("{\n");
  out.push(`  "lockfileVersion": ${lock.lockfileVersion},\n`);
  out.push('  "tools": ');
  pushTools(out, lock.tools);
  out.push(",\n");
  // Written only when a tool came from a registry, so lockfiles without one keep their bytes.
  if (lock.remote && Object.keys(lock.remote).length > 0) out.push(`  "remote": ${renderRemote(lock.remote)},\n`);
  // Likewise only when a tool needs packages.
  if (lock.dependencies && Object.keys(lock.dependencies).length > 0) out.push(`  "dependencies": ${renderValue(lock.dependencies as unknown as CanonicalValue, "  ")},\n`);
  out.push(`  "mcp_servers": ${renderPins(lock.mcp_servers)}\n`);
  out.push("}\n");
  return out.join("");
}

/**
 * The tools section as pieces of `out`, joined once with the rest: a 1,000-tool lockfile is ~2 MB,
 * and joining it level by level (files, tool, section) copied it three times over.
 */
function pushTools(out: string[], tools: Record<string, LockedTool>): void {
  const ids = Object.keys(tools).sort(compareCodePoints);
  if (ids.length === 0) {
    out.push("{}");
    return;
  }
  out.push("{\n");
  for (let i = 0; i < ids.length; i++) {
    out.push(i === 0 ? "    " : ",\n    ", str(ids[i]!), ": ");
    pushTool(out, tools[ids[i]!]!);
  }
  out.push("\n  }");
}

/** Where the entry of tool `id` sits in lockfile `text` (bytes renderLockfile wrote), and the entry as written; undefined when it has none. */
export function findToolEntry(text: string, id: string): { start: number; end: number; entry: LockedTool } | undefined {
  const open = `\n    ${str(id)}: {\n`;
  const start = text.indexOf(open);
  // Only inside "tools" (remote records and pins use the same indent further down).
  const tools = text.indexOf('\n  "tools": ');
  const after = tools === -1 ? -1 : text.indexOf('\n  "', tools + 1);
  if (start === -1 || tools === -1 || start < tools || (after !== -1 && start > after)) return undefined;
  const close = text.indexOf("\n    }", start + open.length);
  if (close === -1) return undefined;
  const end = close + "\n    }".length;
  try {
    const entry = (JSON.parse(`{${text.slice(start + 1, end)}}`) as Record<string, LockedTool>)[id];
    return entry ? { start: start + 1, end, entry } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The lockfile `text` (bytes renderLockfile wrote) with the entry of tool `id` replaced by `tool`,
 * byte for byte what renderLockfile gives for the lock with that one entry changed; undefined when
 * `text` holds no entry for `id`. Also returns the entry it replaced, as written.
 */
export function replaceToolEntry(text: string, id: string, tool: LockedTool): { text: string; before: LockedTool } | undefined {
  const found = findToolEntry(text, id);
  if (!found) return undefined;
  return { text: `${text.slice(0, found.start)}    ${str(id)}: ${renderTool(tool)}${text.slice(found.end)}`, before: found.entry };
}

function renderTool(tool: LockedTool): string {
  const out: string[] = [];
  pushTool(out, tool);
  return out.join("");
}

function pushTool(out: string[], tool: LockedTool): void {
  out.push(
    '{\n      "version": ',
    str(tool.version),
    ',\n      "type": ',
    str(tool.type),
    ',\n      "source": ',
    str(tool.source),
    ',\n      "executor": ',
    tool.executor === null ? "null" : str(tool.executor),
    ',\n      "integrity": ',
    str(tool.integrity),
    ',\n      "manifest_digest": ',
    str(tool.manifest_digest),
    ',\n      "files": ',
  );
  pushFiles(out, tool.files);
  out.push("\n    }");
}

function pushFiles(out: string[], files: readonly LockedFile[]): void {
  if (files.length === 0) {
    out.push("[]");
    return;
  }
  const sorted = inCodePointOrder(files, (f) => f.path);
  out.push("[\n");
  for (let i = 0; i < sorted.length; i++) {
    const f = sorted[i]!;
    out.push(i === 0 ? '        { "path": ' : ',\n        { "path": ', str(f.path), ', "sha256": ', str(f.sha256), f.is_executable === true ? ', "is_executable": true }' : f.is_executable === false ? ', "is_executable": false }' : `, "is_executable": ${f.is_executable} }`);
  }
  out.push("\n      ]");
}

function renderRemote(remote: Record<string, RemoteTool>): string {
  const ids = Object.keys(remote).sort(compareCodePoints);
  const blocks = ids.map((id) => {
    const entry = remote[id] as unknown as Record<string, CanonicalValue>;
    const lines = REMOTE_KEYS.filter((k) => entry[k] !== undefined).map((k) => `      ${str(k)}: ${renderValue(entry[k], "      ")}`);
    return `    ${str(id)}: {\n${lines.join(",\n")}\n    }`;
  });
  return `{\n${blocks.join(",\n")}\n  }`;
}

function renderPins(pins: Record<string, McpPin>): string {
  const ids = Object.keys(pins).sort(compareCodePoints);
  if (ids.length === 0) return "{}";
  const blocks = ids.map((id) => {
    const pin = pins[id] as unknown as Record<string, CanonicalValue>;
    const keys = [...MCP_PIN_KEYS.filter((k) => pin[k] !== undefined), ...Object.keys(pin).filter((k) => !(MCP_PIN_KEYS as readonly string[]).includes(k)).sort(compareCodePoints)];
    const lines = keys.map((k) => `      ${str(k)}: ${renderValue(pin[k], "      ")}`);
    return `    ${str(id)}: {\n${lines.join(",\n")}\n    }`;
  });
  return `{\n${blocks.join(",\n")}\n  }`;
}

/** Generic pretty JSON with code-point-sorted keys and lossless numbers, for MCP pins. */
function renderValue(value: CanonicalValue | undefined, indent: string): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return str(value);
  if (typeof value === "boolean" || typeof value === "number" || typeof value === "bigint" || value instanceof Float) {
    return renderCanonicalJson(value);
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => `${inner}${renderValue(v, inner)}`).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value).sort(compareCodePoints);
  if (keys.length === 0) return "{}";
  return `{\n${keys.map((k) => `${inner}${str(k)}: ${renderValue(value[k], inner)}`).join(",\n")}\n${indent}}`;
}

/**
 * Characters a reviewer cannot see: format characters (zero-width, bidi controls, Unicode tags),
 * controls, line/paragraph separators and Hangul fillers. A poisoned MCP description hides text
 * in them, so the lockfile spells them as \u escapes and a diff shows them.
 */
const INVISIBLE = /[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0]/gu;

/** Printable ASCII but `"` and `\`: such a string is its own JSON text, with nothing to escape. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A string as the lockfile writes it (str): what a reader searching rendered text for a key or value looks for. */
export function renderString(text: string): string {
  return str(text);
}

/**
 * A JSON string as JSON.stringify writes it (UTF-8 kept, lone surrogates escaped), with invisible
 * characters escaped as well; any JSON reader gives back the same string. Paths, digests and ids
 * are almost always plain (a lockfile of 1,000 tools holds ~25,000 strings): they skip both passes.
 */
function str(text: string): string {
  if (PLAIN.test(text)) return `"${text}"`;
  return JSON.stringify(text).replace(INVISIBLE, (ch) =>
    Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
  );
}
