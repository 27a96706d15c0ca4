// Reads exactly the tools of one locked chain from the tree (by their lockfile `source`), without
// walking the whole project, and hashes them through the stat cache. Disk access lives here.
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { StatCache } from "../cache/stat-cache-io.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings.ts";
import { BUILTIN_ROOT, builtinTools } from "../manifest/builtins.ts";
import { type Project, TOOLS_DIR, listToolFiles, toProjectPath } from "../manifest/discover-io.ts";
import { ManifestProblem, decodeManifest, parseManifestText, syntaxOf } from "../manifest/forms.ts";
import { DIRECTORY_MANIFESTS, type ManifestForm, type Tool, type ToolFile } from "../manifest/model.ts";
import { normalizeManifest } from "../manifest/normalize.ts";
import { type TreeTool, hashProjectTools } from "../lockfile/tree-io.ts";

/**
 * The tool whose manifest is `source` (project-relative, or `<builtin>/<id>.yaml`), read the way
 * discovery reads it; undefined when the file is gone or holds no tool. Mirrors discover-io.ts
 * for a single tool so exec never walks the whole tree; any divergence shows up as an integrity
 * mismatch (fail closed), never as a silent pass.
 */
export function readToolAt(root: string, source: string): { tool?: Tool; findings: Finding[] } {
  const findings: Finding[] = [];
  if (source.startsWith(`${BUILTIN_ROOT}/`)) return { tool: builtinTools().find((t) => t.manifestFile === source), findings };
  const abs = join(root, ...source.split("/"));
  const name = basename(abs);
  const syntax = syntaxOf(name);
  if (!syntax || !existsSync(abs)) return { findings };
  const toolsDir = join(root, TOOLS_DIR);
  const isDirectoryTool = (DIRECTORY_MANIFESTS as readonly string[]).includes(name) && dirname(abs) !== toolsDir;
  let parsed: ReturnType<typeof parseManifestText>;
  try {
    parsed = parseManifestText(decodeManifest(readFileSync(abs)), syntax);
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
