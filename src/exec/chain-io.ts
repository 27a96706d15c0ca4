// Reads exactly the tools of one locked chain from the tree (by their lockfile `source`), without
// walking the whole project, and hashes them through the stat cache. Disk access lives here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StatCache } from "../cache/stat-cache-io.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { type CanonicalValue, survivesJsonParse } from "../integrity/value.ts";
import { BUILTIN_ROOT, builtinTool } from "../manifest/builtins.ts";
import { type Project, readToolAt as readManifestAt } from "../manifest/discover-io.ts";
import { type ManifestSyntax, type ParsedManifest, parseManifestBytes } from "../manifest/forms.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";
import { renderLosslessJson } from "../integrity/canonical.ts";
import type { Tool } from "../manifest/model.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import { type ReadLockfile, readLockfileText } from "../lockfile/fs.ts";
import type { Lockfile } from "../schema/lockfile.ts";
import { lockfileFromCheckedText, parseLockfile, parseRenderedLockfile } from "../lockfile/parse.ts";
import { type TreeTool, hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";
import { sha256Hex } from "../integrity/digest.ts";

/**
 * The tool whose manifest is `source` (project-relative, or `<builtin>/<id>.yaml`), read exactly as
 * discovery reads it (discover-io.ts) but alone, so exec never walks the whole tree; manifests go
 * through exec's content memo.
 */
export function readToolAt(root: string, source: string, cacheDir?: string): { tool?: Tool; findings: Finding[] } {
  if (source.startsWith(`${BUILTIN_ROOT}/`)) {
    const id = source.slice(BUILTIN_ROOT.length + 1).replace(/\.yaml$/, "");
    return { tool: builtinTool(id, (text) => parseManifestMemo(new TextEncoder().encode(text), "yaml", cacheDir)), findings: [] };
  }
  return readManifestAt(root, source, (abs, syntax) => parseManifestMemo(readFileSync(abs), syntax, cacheDir));
}

/**
 * Parses manifest bytes, through the memo when a cache is given: the same bytes in the same syntax
 * always parse to the same document, so a warm run reads it back as lossless JSON in the order written (no YAML).
 * Documents with warnings are never memoised, so their findings are never lost. A document with
 * nothing JSON.parse loses (no integral float, no big integer: nearly every manifest) is marked
 * so, and read back by the native JSON.parse rather than the lossless parser.
 */
export function parseManifestMemo(bytes: Uint8Array, syntax: ManifestSyntax, cacheDir: string | undefined): ParsedManifest | "none" {
  const key = cacheDir === undefined ? undefined : memoKey("manifests", syntax, bytes);
  const hit = key === undefined ? undefined : readMemo(cacheDir!, "manifests", key);
  if (hit !== undefined && (hit[0] === PLAIN || hit[0] === LOSSLESS)) {
    const json = hit.slice(1);
    return { value: hit[0] === PLAIN ? (JSON.parse(json) as CanonicalValue) : parseJsonLossless(json, { positions: false }).value, locate: () => undefined, warnings: [] };
  }
  const parsed = parseManifestBytes(bytes, syntax);
  if (key !== undefined && parsed !== "none" && parsed.warnings.length === 0) {
    writeMemo(cacheDir!, "manifests", key, `${survivesJsonParse(parsed.value) ? PLAIN : LOSSLESS}${renderLosslessJson(parsed.value)}`);
  }
  return parsed;
}

/** The first character of a manifest memo: how to read the canonical JSON after it. */
const PLAIN = "P";
const LOSSLESS = "L";

/**
 * The project's lockfile, through the memo: bytes that one process fully checked (schema, digests,
 * semantics) are the same valid lockfile for the next, which then only JSON.parses them. Only text
 * kiwi rendered itself is remembered (JSON.parse loses nothing from it); anything else, and every
 * refusal, goes through parseLockfile each time.
 */
export function readLockfileMemo(root: string, cacheDir: string): ReadLockfile | undefined {
  const text = readLockfileText(root);
  if (text === undefined) return undefined;
  const peek = peekLockfileMemo(text, cacheDir);
  return { lock: peek === "checked" ? lockfileFromCheckedText(text) : peek.lock, text };
}

/**
 * What the memo knows of lockfile text: "checked" when a process checked exactly these bytes as
 * kiwi's own rendering, so the caller may read any part of the text as JSON.parse of the whole
 * would (the staged check reads a few entries of 1,000); else the text parsed with every check,
 * remembered when kiwi rendered it. Refusals as parseLockfile's.
 */
export function peekLockfileMemo(text: string, cacheDir: string): "checked" | { lock: Lockfile; rendered: boolean } {
  const key = lockfileMemoKey(sha256Hex(text));
  if (readMemo(cacheDir, "lockfiles", key) === "checked") return "checked";
  const rendered = parseRenderedLockfile(text);
  if (!rendered) return { lock: parseLockfile(text), rendered: false };
  writeMemo(cacheDir, "lockfiles", key, "checked");
  return { lock: rendered, rendered: true };
}

/**
 * Records bytes `kiwi lock` wrote (or confirmed) as checked: they were rendered from the checked
 * tree, so the next reader (the pre-commit check, exec) only JSON.parses them. Only a lockfile of
 * tools alone (strings and integers, which JSON.parse keeps as written); one with MCP pins,
 * remote records or packages is left to the first reader's full check.
 */
export function rememberWrittenLockfile(cacheDir: string, text: string, lock: Lockfile, textSha256 = sha256Hex(text)): void {
  if (Object.keys(lock.mcp_servers).length > 0 || lock.remote !== undefined || lock.dependencies !== undefined) return;
  writeMemo(cacheDir, "lockfiles", lockfileMemoKey(textSha256), "checked");
}

/**
 * The memo key of lockfile bytes, from their sha256: the lock that writes them digests them once
 * for its tree memo, its lock index and this memo (a 1,000-tool lockfile is ~2 MB).
 */
function lockfileMemoKey(textSha256: string): string {
  return memoKey("lockfiles", textSha256);
}

/** Hashes the given tools (file bytes through the stat cache) into integrities and file entries. */
export function hashChainTools(root: string, tools: Tool[], statCache: StatCache | undefined): TreeTool[] {
  const project: Project = { root, toolsDir: join(root, TOOLS_DIR), tools, findings: [] };
  return hashProjectTools(project, { statCache });
}

/** Throws E_CHECK_FAILED when reading a chain tool produced error findings (e.g. a symlink escaping it). */
export function assertNoReadErrors(findings: readonly Finding[], toolId: string): void {
  const errors = findings.filter((f) => f.severity === "error");
  if (errors.length === 0) return;
  throw new KiwiError("E_CHECK_FAILED", `${toolId} cannot be read safely: ${errors.map((f) => `${f.file}: ${f.message}`).join("; ")}`, {
    hint: 'fix the problem (run "kiwi check"), then run "kiwi lock"',
    details: { findings: errors },
  });
}
