// Finds the project and reads every tool below .ai/tools/ in every form into the tool model.
// Disk access lives here; parsing and mapping are the pure siblings (forms.ts, normalize.ts).
import { type Dirent, existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, extname, join, sep } from "node:path";
import type { Finding } from "../findings/verdict.ts";
import { builtinTools } from "./builtins.ts";
import { type ManifestSyntax, type ParsedManifest, parseManifestBytes, syntaxOf } from "./forms.ts";
import { DIRECTORY_MANIFESTS, REMOTE_TOOLS_DIR, type IgnoreFileText, type ManifestForm, type PackageFileRequirements, type Tool, type ToolFile } from "./model.ts";
import { readIgnoreFileText } from "./ignore-file-io.ts";
import { type FolderEntry, type Listing, TOOLS_DIR, findProjectRoot, ioFinding, listToolFiles, statToolFile, toProjectPath } from "./project-io.ts";
import { type RawTree, TreeListing } from "./raw-tree-io.ts";
import { normalizeManifest } from "./normalize.ts";
import { parametersFromFile } from "./parameters-file.ts";
import { parseInlineScriptMetadata, parsePackageJson, parseRequirementsTxt } from "./package-files.ts";
import { isRecord } from "../integrity/value.ts";
import { fileFinding, severityOf } from "../findings/finding.ts";
import type { RuleId } from "../findings/rules.ts";
import { ManifestCache } from "./parse-cache-io.ts";
import { IGNORED_NAMES } from "../integrity/tool-path.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";
import { SKILL_FILE, skillManifest } from "./skill.ts";
import { PLUGIN_FILE, PLUGIN_MCP_FILE, PLUGIN_SKILLS_DIR, type PluginManifest, type PluginProblem, type PluginServer, checkPluginManifest, pluginServers, serverPointer } from "./plugin.ts";
import { CLAUDE_MCP_FILE, CLAUDE_PLUGIN_DIR, CLAUDE_PLUGIN_FILE, checkClaudePluginManifest, claudeMcpFiles, claudeOnlyComponents, claudePluginServers, claudeSkillDirs } from "./claude-plugin.ts";
import type { CanonicalValue } from "../integrity/value.ts";

/** The parse cache of the readProject call in progress (discovery is synchronous). */
let parseCache: ManifestCache | undefined;
/** The listing of the tree the caller walked, for the readProject call in progress. */
let listing: Listing | undefined;

export interface Project {
  /** Absolute project root (the folder that holds .ai/tools/). */
  root: string;
  /** Absolute .ai/tools/ folder. */
  toolsDir: string;
  /** Project tools first (in path order), then the built-ins no project tool overrides. */
  tools: Tool[];
  /** Problems found while reading: unparseable manifests, symlinks leaving a tool, unreadable files. */
  findings: Finding[];
  /** The project's ignore file (IGNORE_FILE), when it has one: the check reads its entries. */
  ignoreFile?: IgnoreFileText;
}

export interface ReadProjectOptions {
  /** kiwi's cache directory: parsed manifests are remembered there by file identity. */
  cacheDir?: string;
  /**
   * The raw tree of the project at `root`, when the caller just walked it (walkRawTree): folders and
   * stats are read from it instead of the disk. Used only when `root` is the project found.
   */
  raw?: { root: string; tree: RawTree; listing?: TreeListing };
  /** The time (ms) of this run: the ignore file's `expires` dates are judged against its day. */
  now?: number;
}

/** Reads the whole project: every tool in every form, plus the built-ins. */
export function readProject(cwd: string, options: ReadProjectOptions = {}): Project {
  const root = findProjectRoot(cwd);
  const toolsDir = join(root, TOOLS_DIR);
  const findings: Finding[] = [];
  const tools: Tool[] = [];
  parseCache = ManifestCache.open(options.cacheDir, root);
  listing = options.raw?.root === root ? (options.raw.listing ?? new TreeListing(options.raw.tree, toolsDir)) : undefined;
  try {
    walkToolsDir(root, toolsDir, tools, findings);
    parseCache.save();
  } finally {
    parseCache = undefined;
    listing = undefined;
  }
  const ids = new Set(tools.map((t) => t.id));
  for (const builtin of builtinTools()) if (!ids.has(builtin.id)) tools.push(builtin);
  findings.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0)));
  const ignoreFile = readIgnoreFileText(root, options.now);
  return { root, toolsDir, tools, findings, ...(ignoreFile ? { ignoreFile } : {}) };
}

/**
 * kiwi add places one tool in .ai/tools/.remote/<id>/. For an MCP server of an Agent Plugin that
 * is the plugin's files outside skills/, whose mcp.json names its other servers too: they came as
 * files of <id>, not as tools the project added, so only <id> is read there. A folder holding no
 * tool of its own name (put there by hand) keeps all it holds.
 */
function remoteComponent(root: string, dir: string, found: Tool[]): Tool[] {
  const rel = toProjectPath(root, dir);
  if (!rel.startsWith(`${REMOTE_TOOLS_DIR}/`)) return found;
  const name = rel.slice(REMOTE_TOOLS_DIR.length + 1);
  const own = found.filter((t) => t.id === name);
  return own.length > 0 ? own : found;
}

function walkToolsDir(root: string, dir: string, tools: Tool[], findings: Finding[]): void {
  let entries: FolderEntry[];
  try {
    entries = listing?.entries(dir) ?? readdirSync(dir, { withFileTypes: true });
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
      findings.push(
        fileFinding(
          "discover/ambiguous-manifest",
          toProjectPath(root, join(dir, manifests[1]!.name)),
          `the folder has ${manifests.map((m) => m.name).join(" and ")}; a directory tool has exactly one manifest`,
          `delete all but ${manifests[0]!.name}`,
        ),
      );
    }
    readDirectoryTool(root, dir, manifests[0]!.name, tools, findings);
    return;
  }
  if (dir !== join(root, TOOLS_DIR) && entries.some((e) => e.name === SKILL_FILE && e.isFile())) {
    readSkillTool(root, dir, tools, findings);
    return;
  }
  if (dir !== join(root, TOOLS_DIR) && entries.some((e) => e.name === PLUGIN_FILE && e.isFile()) && isAgentPlugin(dir, entries)) {
    tools.push(...remoteComponent(root, dir, pluginTools(root, dir, AGENT_PLUGIN, (abs, syntax) => parseFile(root, abs, syntax, findings), findings)));
    return;
  }
  if (dir !== join(root, TOOLS_DIR) && entries.some((e) => e.name === CLAUDE_PLUGIN_DIR && e.isDirectory()) && existsSync(join(dir, CLAUDE_PLUGIN_FILE))) {
    // A server added from a registry brought the plugin's files along, not the plugin: its other components are not the project's to hear about.
    const remote = toProjectPath(root, dir).startsWith(`${REMOTE_TOOLS_DIR}/`);
    tools.push(...remoteComponent(root, dir, pluginTools(root, dir, CLAUDE_CODE_PLUGIN, (abs, syntax) => parseFile(root, abs, syntax, findings), findings, { skills: true, ...(remote ? {} : { names: entries.map((e) => e.name) }) })));
    return;
  }
  for (const entry of entries) {
    if (IGNORED_NAMES.has(entry.name)) continue;
    // Claude Code's metadata folder outside a plugin (a marketplace's catalog): no tool of its own.
    if (entry.name === CLAUDE_PLUGIN_DIR && entry.isDirectory()) continue;
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) walkToolsDir(root, abs, tools, findings);
    else if (entry.isSymbolicLink()) {
      findings.push(fileFinding("security/symlink", toProjectPath(root, abs), "symbolic links outside a directory tool are not followed", "move the file into .ai/tools/ or inside a directory tool"));
    } else if (entry.isFile()) {
      const syntax = syntaxOf(entry.name);
      if (syntax) readFileTool(root, abs, syntax, tools, findings);
    }
  }
}

function readDirectoryTool(root: string, dir: string, manifestName: string, tools: Tool[], findings: Finding[]): void {
  const manifestAbs = join(dir, manifestName);
  const parsed = parseFile(root, manifestAbs, syntaxOf(manifestName)!, findings);
  if (parsed && parsed !== "none") tools.push(assembleTool(root, manifestAbs, "directory", parsed, findings));
}

function readFileTool(root: string, abs: string, syntax: ManifestSyntax, tools: Tool[], findings: Finding[]): void {
  const parsed = parseFile(root, abs, syntax, findings);
  if (!parsed) return;
  const form = fileFormOf(syntax);
  if (holdsTool(form, parsed)) {
    tools.push(assembleTool(root, abs, form, parsed, findings));
    return;
  }
  if (form === "file") return;
  const hint = syntax === "shell" ? "add a `# ---` comment block with the manifest" : syntax === "python" ? "to make it a tool, put the manifest as YAML in the leading docstring, with tool_type (a docstring without it is prose), or set kiwi_mcp's module variables with __executor_id__" : "add YAML front matter";
  findings.push(fileFinding("discover/no-metadata", toProjectPath(root, abs), "no embedded tool metadata, so this file is not a tool", hint));
}

/** A folder with SKILL.md (and no tool.yaml): an Agent Skill, read as a knowledge tool (skill.ts). */
function readSkillTool(root: string, dir: string, tools: Tool[], findings: Finding[]): void {
  const parsed = parseFile(root, join(dir, SKILL_FILE), "markdown", findings);
  if (parsed === undefined) return;
  const tool = assembleSkillTool(root, dir, parsed, findings);
  if (tool) tools.push(tool);
}

/**
 * The knowledge tool a skill folder stands for: its manifest made from the front matter, and every
 * file of the folder (SKILL.md included: its body is the skill) as the tool's files.
 */
function assembleSkillTool(root: string, dir: string, parsed: ParsedManifest | "none", findings: Finding[]): Tool | undefined {
  const abs = join(dir, SKILL_FILE);
  const file = toProjectPath(root, abs);
  if (parsed === "none" || !isRecord(parsed.value)) {
    findings.push({ rule: "skill/front-matter", severity: severityOf("skill/front-matter"), file, line: 1, column: 1, message: "SKILL.md does not open with YAML front matter (a mapping between two `---` lines)", hint: "start the file with ---, name: <folder name>, description: <what it does and when to use it>, ---" });
    return undefined;
  }
  let text = "";
  try {
    text = readFileSync(abs, "utf8");
  } catch (error) {
    findings.push(ioFinding(root, abs, error));
    return undefined;
  }
  const lines = text.split("\n");
  const close = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  const read = skillManifest(parsed.value, basename(dir), lines.slice(close + 1).join("\n"), close + 2, { claudeCode: inClaudePlugin(root, dir) });
  const locate = (pointer: string) => {
    const mapped = Object.entries(read.pointers).find(([from]) => pointer === from || pointer.startsWith(`${from}/`));
    return parsed.locate(mapped ? mapped[1] + pointer.slice(mapped[0].length) : pointer);
  };
  for (const p of read.problems) {
    const at = p.line !== undefined ? { line: p.line, column: 1 } : parsed.locate(p.pointer);
    findings.push({ rule: p.rule, severity: severityOf(p.rule, p.severity), file, line: at?.line, column: at?.column, message: p.message, hint: p.hint });
  }
  const toolsDir = join(root, TOOLS_DIR);
  const fields = normalizeManifest(read.manifest, basename(dir), toProjectPath(toolsDir, dir));
  return {
    ...fields,
    entrypoint: SKILL_FILE,
    form: "directory",
    root: toProjectPath(root, dir),
    rootAbs: dir,
    manifestFile: file,
    files: listToolFiles(root, dir, findings, listing),
    locate,
    ...(parsed.ignores ? { ignores: parsed.ignores } : {}),
  };
}

/**
 * A skill folder of a Claude Code plugin (<plugin>/skills/<name>/, beside <plugin>/.claude-plugin/plugin.json),
 * which Claude Code reads. Plugins live below the project's tools, so the search stops at `root`:
 * a plugin.json above the project is not the project's, and must not change how its skills read.
 */
function inClaudePlugin(root: string, skillDir: string): boolean {
  const plugin = dirname(dirname(skillDir));
  if (basename(dirname(skillDir)) === PLUGIN_SKILLS_DIR && existsSync(join(plugin, CLAUDE_PLUGIN_FILE)) && !existsSync(join(plugin, PLUGIN_FILE))) return true;
  // Or in a folder plugin.json's skills names (claudeSkillDirs), below the nearest Claude Code plugin.
  for (let dir = plugin; dir.startsWith(`${root}${sep}`); dir = dirname(dir)) {
    if (!existsSync(join(dir, CLAUDE_PLUGIN_FILE))) continue;
    try {
      const dirs = claudeSkillDirs(JSON.parse(readFileSync(join(dir, CLAUDE_PLUGIN_FILE), "utf8")) as CanonicalValue).dirs;
      return !existsSync(join(dir, PLUGIN_FILE)) && dirs.some((d) => join(dir, d) === dirname(skillDir));
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * A folder with plugin.json is an Agent Plugin when it has the plugin's components or names the
 * spec's schema; Claude Code's `.claude-plugin/plugin.json` (another format) is read as before.
 */
function isAgentPlugin(dir: string, entries: readonly FolderEntry[]): boolean {
  if (entries.some((e) => e.name === PLUGIN_MCP_FILE || e.name === PLUGIN_SKILLS_DIR)) return true;
  try {
    return readFileSync(join(dir, PLUGIN_FILE), "utf8").slice(0, 4096).includes("agent-plugins.org/schemas/");
  } catch {
    return false;
  }
}

/** Where a plugin format keeps its manifest and MCP servers, and how it reads them. */
interface PluginFormat {
  manifestFile: string;
  mcpFile: string;
  checkManifest: (value: CanonicalValue) => PluginManifest & { ignored?: string[] };
  servers: (value: CanonicalValue, plugin: PluginManifest, file: string) => { servers: PluginServer[]; problems: PluginProblem[] };
  /** The plugin-relative files holding servers, from the manifest; [mcpFile] when not given. */
  mcpFiles?: (manifest: CanonicalValue) => { files: string[]; problems: PluginProblem[] };
  /** The plugin-relative folders of skill folders, from the manifest; [skills] when not given. */
  skillDirs?: (manifest: CanonicalValue) => { dirs: string[]; problems: PluginProblem[] };
}

const AGENT_PLUGIN: PluginFormat = { manifestFile: PLUGIN_FILE, mcpFile: PLUGIN_MCP_FILE, checkManifest: checkPluginManifest, servers: (value, plugin) => pluginServers(value, plugin) };
/** Claude Code's plugin format (claude-plugin.ts): its skills and MCP servers, read as Agent Plugins' are. */
const CLAUDE_CODE_PLUGIN: PluginFormat = { manifestFile: CLAUDE_PLUGIN_FILE, mcpFile: CLAUDE_MCP_FILE, checkManifest: checkClaudePluginManifest, servers: claudePluginServers, mcpFiles: claudeMcpFiles, skillDirs: claudeSkillDirs };

/**
 * The tools of an Agent Plugin (or Claude Code plugin) folder (plugin.ts, claude-plugin.ts): each
 * skill under skills/, and each server of mcp.json as an mcp_server whose files are the plugin's
 * (skills/ aside) and whose source is `<plugin>/mcp.json#<server>`. A plugin.json that violates
 * the spec yields no tools. `names` (the folder's entries) lets a Claude Code plugin say once which
 * of its components kiwi does not read.
 */
function pluginTools(root: string, dir: string, format: PluginFormat, parse: (abs: string, syntax: ManifestSyntax) => ParsedManifest | "none" | undefined, findings: Finding[], options: { skills: boolean; names?: string[] } = { skills: true }): Tool[] {
  const report = (problems: PluginProblem[], parsed: ParsedManifest) => {
    for (const p of problems) {
      const at = parsed.locate(p.pointer);
      findings.push({ rule: p.rule, severity: severityOf(p.rule), file: toProjectPath(root, join(dir, p.file)), line: at?.line, column: at?.column, message: p.message, hint: p.hint });
    }
  };
  const manifest = parse(join(dir, format.manifestFile), "json");
  if (manifest === undefined || manifest === "none") return [];
  const plugin = format.checkManifest(manifest.value);
  report(plugin.problems, manifest);
  if (!plugin.ok) return [];
  const ignored = [...claudeOnlyComponents(options.names && plugin.ignored ? options.names : []).map((c) => `${c}${c.includes(".") ? "" : "/"}`), ...(options.names ? (plugin.ignored ?? []) : [])];
  if (ignored.length > 0) {
    findings.push({ rule: "plugin/claude-code", severity: severityOf("plugin/claude-code"), file: toProjectPath(root, join(dir, format.manifestFile)), line: 1, column: 1, message: `a Claude Code plugin: kiwi reads its skills (skills/ and plugin.json skills) and MCP servers (${CLAUDE_MCP_FILE} and plugin.json mcpServers) as tools; ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} Claude Code's own and not read (not checked, locked or run)`, hint: "Claude Code still loads them from the plugin" });
  }
  const tools: Tool[] = [];
  const skillDirs = format.skillDirs?.(manifest.value) ?? { dirs: [PLUGIN_SKILLS_DIR], problems: [] };
  if (options.skills) report(skillDirs.problems, manifest);
  for (const skillsRel of options.skills ? skillDirs.dirs : []) {
    const skillsDir = join(dir, skillsRel);
    if (!existsSync(skillsDir)) {
      // skills/ is optional; a folder plugin.json names is not.
      if (skillsRel !== PLUGIN_SKILLS_DIR) findings.push({ rule: "plugin/field", severity: severityOf("plugin/field"), file: toProjectPath(root, join(dir, format.manifestFile)), line: manifest.locate("/skills")?.line, column: manifest.locate("/skills")?.column, message: `skills names ./${skillsRel}, which does not exist, so its skills are not read`, hint: "fix the path (relative to the plugin root) or add the folder" });
      continue;
    }
    let entries: Dirent[] = [];
    try {
      entries = statSync(skillsDir).isDirectory() ? readdirSync(skillsDir, { withFileTypes: true }) : [];
    } catch (error) {
      findings.push(ioFinding(root, skillsDir, error));
    }
    if (!statSync(skillsDir).isDirectory()) findings.push({ rule: "plugin/field", severity: severityOf("plugin/field"), file: toProjectPath(root, skillsDir), message: `${skillsRel} is not a folder, so the plugin's skills there are not read`, hint: `make ${skillsRel}/ a folder of skill folders` });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const skillDir = join(skillsDir, entry.name);
      if (!entry.isDirectory() || !existsSync(join(skillDir, SKILL_FILE))) continue;
      const parsed = parse(join(skillDir, SKILL_FILE), "markdown");
      const tool = parsed === undefined ? undefined : assembleSkillTool(root, skillDir, parsed, findings);
      if (tool) tools.push(tool);
    }
  }
  const mcpFiles = format.mcpFiles?.(manifest.value) ?? { files: [format.mcpFile], problems: [] };
  report(mcpFiles.problems, manifest);
  let files: ToolFile[] | undefined;
  const toolsDir = join(root, TOOLS_DIR);
  for (const mcpFile of mcpFiles.files) {
    const mcpAbs = join(dir, mcpFile);
    if (!existsSync(mcpAbs)) {
      // .mcp.json is optional; a file plugin.json names is not.
      if (mcpFile !== format.mcpFile) findings.push({ rule: "plugin/mcp", severity: severityOf("plugin/mcp"), file: toProjectPath(root, join(dir, format.manifestFile)), line: manifest.locate("/mcpServers")?.line, column: manifest.locate("/mcpServers")?.column, message: `mcpServers names ./${mcpFile}, which does not exist, so its servers are not read`, hint: "fix the path (relative to the plugin root) or add the file" });
      continue;
    }
    const mcp = mcpFile === format.manifestFile ? manifest : parse(mcpAbs, "json");
    if (mcp === undefined || mcp === "none") continue;
    const read = format.servers(mcp.value, plugin, mcpFile);
    report(read.problems, mcp);
    if (read.servers.length === 0) continue;
    files ??= listToolFiles(root, dir, findings, listing).filter((f) => !f.path.startsWith(`${PLUGIN_SKILLS_DIR}/`));
    const wrapped = isRecord(mcp.value) && mcp.value.mcpServers !== undefined;
    for (const server of read.servers) {
      const fields = normalizeManifest(server.manifest, server.name, toProjectPath(toolsDir, dir));
      const at = `${wrapped ? "/mcpServers" : ""}/${server.name}`;
      tools.push({ ...fields, form: "directory", root: toProjectPath(root, dir), rootAbs: dir, manifestFile: `${toProjectPath(root, mcpAbs)}#${server.name}`, files, locate: (pointer) => mcp.locate(serverPointer(at, pointer)) ?? mcp.locate(at) });
    }
  }
  return tools;
}

/**
 * The tool whose manifest is `source`, read exactly as readProject reads it (parse warnings and
 * unreadable files become findings, positions are kept) but alone, without walking the tree: the
 * staged check reads the few tools its verdict looks at this way (ops/staged-project-io.ts).
 */
export function readToolAlone(root: string, source: string): { tool?: Tool; findings: Finding[] } {
  const warnings: Finding[] = [];
  try {
    const read = readToolAt(root, source, (abs, syntax) => {
      if (tooLargeForMetadata(statSync(abs).size, syntax)) return "none";
      const parsed = parseManifestBytes(readFileSync(abs), syntax);
      if (parsed !== "none") for (const w of parsed.warnings) warnings.push(problemFinding(toProjectPath(root, abs), w));
      return parsed;
    });
    return { ...read, findings: [...warnings, ...read.findings] };
  } catch (error) {
    // A file system error (it went away, became unreadable) is a finding, as discovery makes it.
    if (!(error instanceof Error && "syscall" in error)) throw error;
    return { findings: [...warnings, ioFinding(root, join(root, ...source.split("#")[0]!.split("/")), error)] };
  }
}

/** The Claude Code plugin folder holding `file` (its nearest ancestor under .ai/tools/ with .claude-plugin/plugin.json), if any. */
function claudePluginOf(root: string, file: string): string | undefined {
  const tools = join(root, TOOLS_DIR);
  for (let dir = dirname(file); dir.startsWith(`${tools}/`); dir = dirname(dir)) {
    if (existsSync(join(dir, CLAUDE_PLUGIN_FILE))) return dir;
  }
  return undefined;
}

/** Parses one manifest file: discovery goes through its parse cache, exec through its content memo. */
export type ManifestFileParser = (abs: string, syntax: ManifestSyntax) => ParsedManifest | "none";

/**
 * The tool whose manifest is `source` (project-relative), read exactly as discovery reads it but
 * without walking the tree (kiwi exec reads only its chain). Undefined when the file is gone or
 * holds no tool; parse problems come back as findings.
 */
export function readToolAt(root: string, source: string, parse: ManifestFileParser): { tool?: Tool; findings: Finding[] } {
  const findings: Finding[] = [];
  const hash = source.indexOf("#");
  if (hash !== -1) {
    // A plugin's MCP server: <plugin>/mcp.json#<server>, or a Claude Code plugin's
    // <plugin>/<.mcp.json, .claude-plugin/plugin.json or a file its mcpServers names>#<server> (pluginTools).
    const file = join(root, ...source.slice(0, hash).split("/"));
    const agent = basename(file) === PLUGIN_MCP_FILE && existsSync(join(dirname(file), PLUGIN_FILE));
    const dir = agent ? dirname(file) : (claudePluginOf(root, file) ?? dirname(file));
    const guarded = (abs: string, syntax: ManifestSyntax) => {
      try {
        return parse(abs, syntax);
      } catch (error) {
        if (!(error instanceof ParseProblem)) throw error;
        findings.push(problemFinding(toProjectPath(root, abs), error));
        return undefined;
      }
    };
    const format = agent ? AGENT_PLUGIN : CLAUDE_CODE_PLUGIN;
    if (!existsSync(join(dir, format.manifestFile))) return { findings };
    const tool = pluginTools(root, dir, format, guarded, findings, { skills: false }).find((t) => t.manifestFile === source);
    return tool ? { tool, findings } : { findings };
  }
  const abs = join(root, ...source.split("/"));
  const name = basename(abs);
  const syntax = syntaxOf(name);
  if (!syntax || !existsSync(abs)) return { findings };
  let parsed: ParsedManifest | "none";
  try {
    parsed = parse(abs, syntax);
  } catch (error) {
    if (!(error instanceof ParseProblem)) throw error;
    findings.push(problemFinding(source, error));
    return { findings };
  }
  const nested = dirname(abs) !== join(root, TOOLS_DIR);
  if (name === SKILL_FILE && nested) {
    const tool = assembleSkillTool(root, dirname(abs), parsed, findings);
    return tool ? { tool, findings } : { findings };
  }
  // A manifest-named file directly in .ai/tools/ is a single-file tool (see walkToolsDir).
  const form = (DIRECTORY_MANIFESTS as readonly string[]).includes(name) && nested ? "directory" : fileFormOf(syntax);
  return holdsTool(form, parsed) ? { tool: assembleTool(root, abs, form, parsed, findings), findings } : { findings };
}

function fileFormOf(syntax: ManifestSyntax): ManifestForm {
  return syntax === "python" || syntax === "shell" ? "script" : syntax === "markdown" ? "markdown" : "file";
}

/** A parse result is a tool unless it is "none", or embedded metadata that is not a mapping. */
function holdsTool(form: ManifestForm, parsed: ParsedManifest | "none"): parsed is ParsedManifest {
  if (parsed === "none") return false;
  return form === "file" || form === "directory" || isRecord(parsed.value);
}

/** One tool from its parsed manifest: the files it owns, the id it falls back to, its entry point. */
function assembleTool(root: string, manifestAbs: string, form: ManifestForm, parsed: ParsedManifest, findings: Finding[]): Tool {
  const name = basename(manifestAbs);
  const dir = dirname(manifestAbs);
  const listed = form === "directory" ? listToolFiles(root, dir, findings, listing) : undefined;
  const files = listed
    ? listed.filter((f) => f.path !== name)
    : form === "file"
      ? []
      : [statToolFile(manifestAbs, name, undefined, undefined, listing)].filter((f): f is ToolFile => f !== undefined);
  // A directory tool's manifest, as listed: its stat identity keys what kiwi check found in it.
  const manifest = listed?.find((f) => f.path === name);
  const toolsDir = join(root, TOOLS_DIR);
  const treeAbs = form === "directory" ? dir : manifestAbs.slice(0, manifestAbs.length - extname(manifestAbs).length);
  const fields = normalizeManifest(parsed.value, form === "directory" ? basename(dir) : name.slice(0, name.lastIndexOf(".")), toProjectPath(toolsDir, treeAbs));
  const entrypoint = form === "script" || form === "markdown" ? (fields.entrypoint ?? name) : fields.entrypoint;
  if (typeof fields.parameters === "string") fields.parameters = loadParametersFile(root, dir, form, files, fields.parameters, toProjectPath(root, manifestAbs), findings);
  const fileRequirements = readFileRequirements(form, files, entrypoint, toProjectPath(root, dir));
  return {
    ...fields,
    ...(fileRequirements ? { fileRequirements } : {}),
    entrypoint,
    form,
    root: toProjectPath(root, dir),
    rootAbs: dir,
    manifestFile: toProjectPath(root, manifestAbs),
    files,
    ...(manifest ? { manifestStat: { size: manifest.size, mtimeMs: manifest.mtimeMs, ctimeMs: manifest.ctimeMs, ino: manifest.ino } } : {}),
    locate: parsed.locate,
    ...(parsed.ignores ? { ignores: parsed.ignores } : {}),
  };
}

/**
 * `parameters: params.yaml`: the parameters list (or JSON Schema) in a file of the tool's own, so
 * it is hashed with the tool. Problems are `parameters/file` findings, and the tool then declares
 * no parameters (the lock refuses it on the error).
 */
function loadParametersFile(root: string, dir: string, form: ManifestForm, files: readonly ToolFile[], written: string, manifestFile: string, findings: Finding[]): unknown {
  const problem = (message: string, hint: string) => {
    findings.push(fileFinding("parameters/file", manifestFile, `parameters names the file "${written}", but ${message}`, hint));
    return undefined;
  };
  if (form !== "directory") return problem("a single-file tool has no files of its own", "make it a directory tool (<name>/tool.yaml beside the parameters file), or list the parameters in the manifest");
  const rel = written.replace(/^\.\//, "");
  const file = files.find((f) => f.path === rel);
  if (!file) return problem("it is not a file inside the tool directory", `add ${rel} to ${toProjectPath(root, dir)} or fix the path`);
  let text: string;
  try {
    text = readFileSync(file.abs, "utf8");
  } catch (error) {
    return problem(`it cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, "check the file's permissions");
  }
  const read = parametersFromFile(text, rel);
  return read.ok ? read.parameters : problem(read.problem, "write a parameters list ([{ name, type, ... }]) or a JSON Schema ({ type: object, properties, required })");
}

/**
 * Requirements in the tool's own files: requirements.txt and package.json at a directory tool's
 * top, and PEP 723 metadata in its Python entry point. They are tool files, so the lock already pins
 * their bytes; kiwi resolves and pins the packages themselves (a package-lock.json is not read).
 */
function readFileRequirements(form: ManifestForm, files: readonly ToolFile[], entrypoint: string | undefined, rootRel: string): PackageFileRequirements | undefined {
  const out: PackageFileRequirements = { pypi: [], problems: [] };
  const at = (path: string) => (rootRel ? `${rootRel}/${path}` : path);
  const read = (file: ToolFile | undefined): string | undefined => {
    if (!file || file.size > 1024 * 1024) return undefined;
    try {
      return readFileSync(file.abs, "utf8");
    } catch {
      return undefined;
    }
  };
  const byPath = (path: string) => files.find((f) => f.path === path);
  if (form === "directory") {
    const requirements = read(byPath("requirements.txt"));
    if (requirements !== undefined) parseRequirementsTxt(requirements, at("requirements.txt"), out);
    const packageJson = read(byPath("package.json"));
    if (packageJson !== undefined) parsePackageJson(packageJson, at("package.json"), out);
  }
  if (entrypoint?.endsWith(".py")) {
    // Most scripts carry no PEP 723 block: that answer is remembered by the file's identity (in the
    // parse cache, beside its manifests), so an unchanged tree opens no script at discovery.
    const file = byPath(entrypoint);
    const key = `${at(entrypoint)}\0pep723`;
    if (!file || parseCache?.get(key, file) !== null) {
      const script = read(file);
      if (script?.includes("# /// script")) parseInlineScriptMetadata(script, at(entrypoint), out, (t) => Bun.TOML.parse(t));
      else if (file && script !== undefined) parseCache?.set(key, file, null);
    }
  }
  return out.pypi.length > 0 || out.npm || out.problems.length > 0 ? out : undefined;
}

/** A script or page past 10 MiB is taken to hold no metadata, unread (a manifest file is always read: its size is a finding). */
function tooLargeForMetadata(size: number, syntax: ManifestSyntax): boolean {
  return size > 10 * 1024 * 1024 && syntax !== "json" && syntax !== "yaml";
}

function parseFile(root: string, abs: string, syntax: ManifestSyntax, findings: Finding[]): ParsedManifest | "none" | undefined {
  const file = toProjectPath(root, abs);
  try {
    const stat = listing?.stat(abs) ?? statSync(abs);
    if (tooLargeForMetadata(stat.size, syntax)) return "none";
    const cached = parseCache?.get(file, stat);
    if (cached === null) return "none";
    if (cached !== undefined) {
      // Positions are only needed for findings: parse the file again if one asks.
      let fresh: ParsedManifest | undefined;
      const locate = (pointer: string) => {
        fresh ??= parseManifestBytes(readFileSync(abs), syntax) as ParsedManifest;
        return fresh.locate(pointer);
      };
      const ignores = parseCache?.ignoresOf(file);
      return { value: cached, locate, warnings: [], ...(ignores ? { ignores } : {}) };
    }
    const parsed = parseManifestBytes(readFileSync(abs), syntax);
    if (parsed === "none") parseCache?.set(file, stat, null);
    else if (parsed.warnings.length === 0) parseCache?.set(file, stat, parsed.value, parsed.ignores);
    else for (const w of parsed.warnings) findings.push(problemFinding(file, w));
    return parsed;
  } catch (error) {
    if (error instanceof ParseProblem) findings.push(problemFinding(file, error));
    else findings.push(ioFinding(root, abs, error));
    return undefined;
  }
}


/** A parse problem as a finding; how severe it is comes from the rule table, like every finding's. */
function problemFinding(file: string, problem: ParseProblem): Finding {
  return fileFinding(problem.rule as RuleId, file, problem.message, problem.hint, problem.position);
}
