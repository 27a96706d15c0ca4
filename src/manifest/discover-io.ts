// Finds the project and reads every tool below .ai/tools/ in every form into the tool model.
// Disk access lives here; parsing and mapping are the pure siblings (forms.ts, normalize.ts).
import { type Dirent, type Stats, existsSync, lstatSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings.ts";
import { builtinTools } from "./builtins.ts";
import { ManifestProblem, type ManifestSyntax, decodeManifest, parseManifestText, syntaxOf } from "./forms.ts";
import { DIRECTORY_MANIFESTS, IGNORED_NAMES, type ManifestForm, type Tool, type ToolFile } from "./model.ts";
import { isRecord, normalizeManifest } from "./normalize.ts";
import { ManifestCache } from "./parse-cache-io.ts";

/** The parse cache of the readProject call in progress (discovery is synchronous). */
let parseCache: ManifestCache | undefined;

/** Where tools live, relative to the project root. */
export const TOOLS_DIR = join(".ai", "tools");

export interface Project {
  /** Absolute project root (the folder that holds .ai/tools/). */
  root: string;
  /** Absolute .ai/tools/ folder. */
  toolsDir: string;
  /** Project tools first (in path order), then the built-ins no project tool overrides. */
  tools: Tool[];
  /** Problems found while reading: unparseable manifests, symlinks leaving a tool, unreadable files. */
  findings: Finding[];
}

/** The nearest ancestor of `cwd` (inclusive) that holds `.ai/tools/`. */
export function findProjectRoot(cwd: string): string {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, TOOLS_DIR))) return dir;
    if (dirname(dir) === dir) break;
  }
  throw new KiwiError("E_NO_PROJECT", `no .ai/tools/ folder in ${cwd} or any parent`, {
    hint: 'run "kiwi init" to create one, or pass --cwd <project>',
  });
}

export interface ReadProjectOptions {
  /** kiwi's cache directory: parsed manifests are remembered there by file identity. */
  cacheDir?: string;
}

/** Reads the whole project: every tool in every form, plus the built-ins. */
export function readProject(cwd: string, options: ReadProjectOptions = {}): Project {
  const root = findProjectRoot(cwd);
  const toolsDir = join(root, TOOLS_DIR);
  const findings: Finding[] = [];
  const tools: Tool[] = [];
  parseCache = ManifestCache.open(options.cacheDir, root);
  try {
    walkToolsDir(root, toolsDir, tools, findings);
    parseCache.save();
  } finally {
    parseCache = undefined;
  }
  const ids = new Set(tools.map((t) => t.id));
  for (const builtin of builtinTools()) if (!ids.has(builtin.id)) tools.push(builtin);
  findings.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0)));
  return { root, toolsDir, tools, findings };
}

/** Project-relative path with `/` separators. */
export function toProjectPath(root: string, abs: string): string {
  return relative(root, abs).split(sep).join("/");
}

function walkToolsDir(root: string, dir: string, tools: Tool[], findings: Finding[]): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    findings.push(ioFinding(root, dir, error));
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const precedence = DIRECTORY_MANIFESTS as readonly string[];
  const manifests = entries
    .filter((e) => precedence.includes(e.name) && !e.isDirectory())
    .sort((a, b) => precedence.indexOf(a.name) - precedence.indexOf(b.name));
  if (manifests.length > 0 && dir !== join(root, TOOLS_DIR)) {
    if (manifests.length > 1) {
      findings.push({
        rule: "discover/ambiguous-manifest",
        severity: "error",
        file: toProjectPath(root, join(dir, manifests[1]!.name)),
        message: `the folder has ${manifests.map((m) => m.name).join(" and ")}; a directory tool has exactly one manifest`,
        hint: `delete all but ${manifests[0]!.name}`,
      });
    }
    readDirectoryTool(root, dir, manifests[0]!.name, tools, findings);
    return;
  }
  for (const entry of entries) {
    if (IGNORED_NAMES.has(entry.name)) continue;
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) walkToolsDir(root, abs, tools, findings);
    else if (entry.isSymbolicLink()) {
      findings.push({
        rule: "security/symlink",
        severity: "warning",
        file: toProjectPath(root, abs),
        message: "symbolic links outside a directory tool are not followed",
        hint: "move the file into .ai/tools/ or inside a directory tool",
      });
    } else if (entry.isFile()) {
      const syntax = syntaxOf(entry.name);
      if (syntax) readFileTool(root, abs, syntax, tools, findings);
    }
  }
}

function readDirectoryTool(root: string, dir: string, manifestName: string, tools: Tool[], findings: Finding[]): void {
  const manifestAbs = join(dir, manifestName);
  const parsed = parseFile(root, manifestAbs, syntaxOf(manifestName)!, findings);
  if (!parsed || parsed === "none") return;
  const files = listToolFiles(root, dir, findings).filter((f) => f.path !== manifestName);
  tools.push(buildTool(root, dir, manifestAbs, "directory", parsed, basename(dir), files));
}

function readFileTool(root: string, abs: string, syntax: ManifestSyntax, tools: Tool[], findings: Finding[]): void {
  const parsed = parseFile(root, abs, syntax, findings);
  if (!parsed) return;
  const file = toProjectPath(root, abs);
  const embedded = syntax === "python" || syntax === "shell" || syntax === "markdown";
  if (parsed === "none" || (embedded && !isRecord(parsed.value))) {
    if (embedded) {
      findings.push({
        rule: "discover/no-metadata",
        severity: "info",
        file,
        message: "no embedded tool metadata, so this file is not a tool",
        hint: syntax === "shell" ? "add a `# ---` comment block with the manifest" : syntax === "python" ? "put the manifest as YAML in the leading docstring" : "add YAML front matter",
      });
    }
    return;
  }
  const name = basename(abs);
  const stem = name.slice(0, name.lastIndexOf("."));
  const form: ManifestForm = syntax === "python" || syntax === "shell" ? "script" : syntax === "markdown" ? "markdown" : "file";
  const files = form === "file" ? [] : [statToolFile(dirname(abs), abs, name)].filter((f): f is ToolFile => f !== undefined);
  tools.push(buildTool(root, dirname(abs), abs, form, parsed, stem, files));
}

type Parsed = Exclude<ReturnType<typeof parseManifestText>, "none">;

function parseFile(root: string, abs: string, syntax: ManifestSyntax, findings: Finding[]): Parsed | "none" | undefined {
  const file = toProjectPath(root, abs);
  try {
    const stat = statSync(abs);
    if (stat.size > 10 * 1024 * 1024 && syntax !== "json" && syntax !== "yaml") return "none";
    const cached = parseCache?.get(file, stat);
    if (cached === null) return "none";
    if (cached !== undefined) {
      // Positions are only needed for findings: parse the file again if one asks.
      let fresh: Parsed | undefined;
      const locate = (pointer: string) => {
        fresh ??= parseManifestText(decodeManifest(readFileSync(abs)), syntax) as Parsed;
        return fresh.locate(pointer);
      };
      return { value: cached, locate, warnings: [] };
    }
    const parsed = parseManifestText(decodeManifest(readFileSync(abs)), syntax);
    if (parsed === "none") parseCache?.set(file, stat, null);
    else if (parsed.warnings.length === 0) parseCache?.set(file, stat, parsed.value);
    else for (const w of parsed.warnings) findings.push(problemFinding(file, w, "error"));
    return parsed;
  } catch (error) {
    if (error instanceof ManifestProblem) findings.push(problemFinding(file, error, "error"));
    else findings.push(ioFinding(root, abs, error));
    return undefined;
  }
}

function buildTool(root: string, rootAbs: string, manifestAbs: string, form: ManifestForm, parsed: Parsed, fallbackId: string, files: ToolFile[]): Tool {
  const fields = normalizeManifest(parsed.value, fallbackId);
  const entrypoint = form === "script" || form === "markdown" ? (fields.entrypoint ?? basename(manifestAbs)) : fields.entrypoint;
  return {
    ...fields,
    entrypoint,
    form,
    root: toProjectPath(root, rootAbs),
    rootAbs,
    manifestFile: toProjectPath(root, manifestAbs),
    files,
    locate: parsed.locate,
  };
}

/**
 * Every regular file below a directory tool, sorted by path. A symlink is followed only when its
 * target stays inside the tool; one that leaves it, or loops, is a finding and never followed.
 */
export function listToolFiles(root: string, toolDir: string, findings: Finding[]): ToolFile[] {
  const out: ToolFile[] = [];
  let realRoot: string;
  try {
    realRoot = realpathSync(toolDir);
  } catch (error) {
    findings.push(ioFinding(root, toolDir, error));
    return out;
  }
  const visited = new Set<string>([realRoot]);
  const walk = (dirAbs: string, relDir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dirAbs, { withFileTypes: true });
    } catch (error) {
      findings.push(ioFinding(root, dirAbs, error));
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (IGNORED_NAMES.has(entry.name)) continue;
      const abs = join(dirAbs, entry.name);
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(abs);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          findings.push({
            rule: code === "ELOOP" ? "security/symlink-loop" : "security/symlink-broken",
            severity: "error",
            file: toProjectPath(root, abs),
            message: code === "ELOOP" ? "the symbolic link loops" : "the symbolic link points at nothing",
            hint: "replace the link with the file it should point at",
          });
          continue;
        }
        if (target !== realRoot && !target.startsWith(realRoot + sep)) {
          findings.push({
            rule: "security/symlink-escape",
            severity: "error",
            file: toProjectPath(root, abs),
            message: `the symbolic link resolves outside the tool directory (to ${target})`,
            hint: "copy the file into the tool instead of linking to it",
          });
          continue;
        }
        const stat = statSync(target);
        if (stat.isDirectory()) {
          if (visited.has(target)) continue;
          visited.add(target);
          walk(target, rel);
        } else if (stat.isFile()) out.push(fileOf(rel, target, stat));
      } else if (entry.isDirectory()) {
        walk(abs, rel);
      } else if (entry.isFile()) {
        const file = statToolFile(dirAbs, abs, rel, findings, root);
        if (file) out.push(file);
      }
    }
  };
  walk(realRoot === toolDir ? toolDir : realRoot, "");
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function statToolFile(_dir: string, abs: string, rel: string, findings?: Finding[], root?: string): ToolFile | undefined {
  try {
    return fileOf(rel, abs, lstatSync(abs));
  } catch (error) {
    if (findings && root) findings.push(ioFinding(root, abs, error));
    return undefined;
  }
}

function fileOf(path: string, abs: string, stat: Stats): ToolFile {
  return {
    path,
    abs,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    ino: stat.ino,
    isExecutable: (stat.mode & 0o100) !== 0,
  };
}

function problemFinding(file: string, problem: ManifestProblem, severity: "error" | "warning"): Finding {
  return {
    rule: problem.rule,
    severity,
    file,
    line: problem.position?.line,
    column: problem.position?.column,
    message: problem.message,
    hint: problem.hint,
  };
}

function ioFinding(root: string, abs: string, error: unknown): Finding {
  const code = (error as NodeJS.ErrnoException)?.code ?? "EIO";
  return {
    rule: "discover/unreadable",
    severity: "error",
    file: toProjectPath(root, abs),
    message: `cannot read: ${code}`,
    hint: code === "EACCES" ? "make the file readable by the user running kiwi" : "check the path",
  };
}
