// Reads exactly the tools of one locked chain from the tree (by their lockfile `source`), without
// walking the whole project, and hashes them through the stat cache. Disk access lives here.
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { StatCache } from "../cache/stat-cache-io.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings.ts";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import { BUILTIN_ROOT, builtinSource } from "../manifest/builtins.ts";
import { type Project } from "../manifest/discover-io.ts";
import { TOOLS_DIR, listToolFiles, toProjectPath } from "../manifest/project-io.ts";
import { ManifestProblem, type ManifestSyntax, type ParsedManifest, decodeManifest, parseManifestText, syntaxOf } from "../manifest/forms.ts";
import { parseJsonLossless } from "../manifest/json.ts";
import { DIRECTORY_MANIFESTS, type ManifestForm, type Tool, type ToolFile } from "../manifest/model.ts";
import { normalizeManifest } from "../manifest/normalize.ts";
import { type TreeTool, hashProjectTools } from "../lockfile/tree-io.ts";
import { memoKey, readMemo, writeMemo } from "./memo-io.ts";

/**
 * The tool whose manifest is `source` (project-relative, or `<builtin>/<id>.yaml`), read the way
 * discovery reads it; undefined when the file is gone or holds no tool. Mirrors discover-io.ts
 * for a single tool so exec never walks the whole tree; any divergence shows up as an integrity
 * mismatch (fail closed), never as a silent pass.
 */
export function readToolAt(root: string, source: string, cacheDir?: string): { tool?: Tool; findings: Finding[] } {
  const findings: Finding[] = [];
  if (source.startsWith(`${BUILTIN_ROOT}/`)) return { tool: readBuiltin(source, cacheDir), findings };
  const abs = join(root, ...source.split("/"));
  const name = basename(abs);
  const syntax = syntaxOf(name);
  if (!syntax || !existsSync(abs)) return { findings };
  const toolsDir = join(root, TOOLS_DIR);
  const isDirectoryTool = (DIRECTORY_MANIFESTS as readonly string[]).includes(name) && dirname(abs) !== toolsDir;
  let parsed: ParsedManifest | "none";
  try {
    parsed = parseManifestMemo(readFileSync(abs), syntax, cacheDir);
  } catch (error) {
    if (error instanceof ManifestProblem) {
      findings.push({ rule: error.rule, severity: "error", file: source, line: error.position?.line, column: error.position?.column, message: error.message, hint: error.hint });
      return { findings };
    }
    throw error;
  }
  if (parsed === "none") return { findings };
  const stem = name.slice(0, name.lastIndexOf("."));
  const form: ManifestForm = isDirectoryTool ? "directory" : syntax === "python" || syntax === "shell" ? "script" : syntax === "markdown" ? "markdown" : "file";
  let files: ToolFile[] = [];
  if (form === "directory") files = listToolFiles(root, dirname(abs), findings).filter((f) => f.path !== name);
  else if (form === "script" || form === "markdown") {
    const st = lstatSync(abs);
    files = [{ path: name, abs, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, isExecutable: (st.mode & 0o100) !== 0 }];
  }
  const fields = normalizeManifest(parsed.value, form === "directory" ? basename(dirname(abs)) : stem);
  const entrypoint = form === "script" || form === "markdown" ? (fields.entrypoint ?? name) : fields.entrypoint;
  const tool: Tool = {
    ...fields,
    entrypoint,
    form,
    root: toProjectPath(root, dirname(abs)),
    rootAbs: dirname(abs),
    manifestFile: source,
    files,
    locate: parsed.locate,
  };
  return { tool, findings };
}

/** One built-in tool, built exactly as builtins.ts builds them, without parsing the others. */
function readBuiltin(source: string, cacheDir: string | undefined): Tool | undefined {
  const id = source.slice(BUILTIN_ROOT.length + 1).replace(/\.yaml$/, "");
  const text = builtinSource(id);
  if (text === undefined) return undefined;
  const parsed = parseManifestMemo(new TextEncoder().encode(text), "yaml", cacheDir);
  if (parsed === "none") return undefined;
  return { ...normalizeManifest(parsed.value, id), form: "builtin", root: BUILTIN_ROOT, rootAbs: "", manifestFile: source, files: [], locate: parsed.locate };
}

/**
 * Parses manifest bytes, through the memo when a cache is given: the same bytes in the same syntax
 * always parse to the same document, so a warm run reads it back as canonical JSON (no YAML).
 * Documents with warnings are never memoised, so their findings are never lost.
 */
export function parseManifestMemo(bytes: Uint8Array, syntax: ManifestSyntax, cacheDir: string | undefined): ParsedManifest | "none" {
  const key = cacheDir === undefined ? undefined : memoKey("manifests", syntax, bytes);
  const hit = key === undefined ? undefined : readMemo(cacheDir!, "manifests", key);
  if (hit !== undefined) return { value: parseJsonLossless(hit, { positions: false }).value, locate: () => undefined, warnings: [] };
  const parsed = parseManifestText(decodeManifest(bytes), syntax);
  if (key !== undefined && parsed !== "none" && parsed.warnings.length === 0) writeMemo(cacheDir!, "manifests", key, renderCanonicalJson(parsed.value));
  return parsed;
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
