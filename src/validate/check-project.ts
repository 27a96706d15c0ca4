// Runs every validation layer over a project (checkProject), resolves `--only` to a scope and
// orders, escalates and counts the findings; the layers themselves are the other files of validate/.
import type { Finding, IgnoredFinding } from "../findings/verdict.ts";
import type { Project } from "../manifest/discover-io.ts";
import type { Tool } from "../manifest/model.ts";
import { TOOL_TYPES } from "../schema/vocabulary.ts";
import { indexTools } from "../resolve/chain.ts";
import { type ParameterMemo, checkParameters } from "./parameters.ts";
import { checkChains, checkChildSchemas, checkOwnChildSchemas } from "./chain-layer.ts";
import { fileFinding, toolFinding } from "../findings/finding.ts";
import { type ChildSchemaMemo, type LayerContext, type RemoteRecords, isPublished } from "./layer.ts";
import { ruleInfo } from "../findings/rules.ts";
import { checkMagray } from "./magray.ts";
import { checkPackages } from "./packages.ts";
import { checkSecurity } from "./security.ts";
import { type SyntaxResults, planSyntaxChecks, syntaxFindings } from "./syntax.ts";
import { checkType } from "./types.ts";
import { checkUniversal } from "./universal.ts";
import { type IgnoreComments, type ScopedIgnoreEntry, applyIgnores } from "./ignores.ts";
import { parseIgnoreFile } from "./ignore-file.ts";
import { IGNORE_FILE, type IgnoreFileText, isRemoteTool, manifestPathOf } from "../manifest/model.ts";
import { suggest } from "../resolve/suggest.ts";

export { planSyntaxChecks, syntaxFindings } from "./syntax.ts";
export type { SyntaxRequest, SyntaxResults } from "./syntax.ts";

export interface CheckOptions {
  /** Security warnings that --strict escalates become errors. */
  strict?: boolean;
  /** Tool ids or project-relative paths to report on; chain rules still see the whole tree. */
  only?: readonly string[];
  /** Interpreter verdicts for script entry points (from syntax-io.ts), when already known. */
  syntax?: SyntaxResults;
  /** Remembered child_schemas verdicts (child-schema-memo-io.ts): pairs judged before never load ajv. */
  childSchemaMemo?: ChildSchemaMemo;
  /**
   * The tools every layer judges in this run, the syntax checks and the scan of their files
   * included ("all": the whole project): an entry of the ignore file about one of them (or, with
   * "all", any entry) that lets nothing through is reported. Absent (the lock's check, which runs
   * the pure layers only), none is: a finding it never computes is not a finding gone.
   */
  complete?: "all" | readonly Tool[];
  /**
   * What tool.lock.json records of remote tools (`kiwi check` reads it): a tool under
   * .ai/tools/.remote/ it does not record was put there by hand or committed, so it is checked as the
   * project's own, its credentials errors, and is a security/remote-unlocked error. Absent (the
   * lock's check, whose lockfile keeps the records it had; the staged check, which refuses such files
   * in a commit), the folder decides.
   */
  remoteRecords?: RemoteRecords;
  /** Remote tools tool.lock.json records that this checkout has not installed (the lock's and kiwi check's callers read them). */
  notInstalled?: ReadonlySet<string>;
}

export interface CheckResult {
  ok: boolean;
  findings: Finding[];
  /** Project tools reported on (built-ins are checked but not counted). */
  toolsChecked: number;
  /** Entries of `only` that matched no tool and no file. */
  unmatched: string[];
  counts: { error: number; warning: number; info: number };
  /** Findings a `# kiwi-ignore:` comment let through (not in `findings`, not counted). */
  ignored: IgnoredFinding[];
  /** The ignore comments of the tools in scope, so findings added later (withFindings) meet them too. */
  ignoreComments: IgnoreComments[];
  /** The ignore file's entries, likewise. */
  ignoreEntries: ScopedIgnoreEntry[];
}

/** What `only` selects: tools, and discovery findings on files. */
export interface Scope {
  tools: Tool[];
  has(tool: Tool): boolean;
  hasFile(file: string): boolean;
  unmatched: string[];
}

/** Resolves `only` (ids or project-relative paths) against the project; no `only` means everything. */
export function resolveScope(project: Project, only?: readonly string[]): Scope {
  if (!only || only.length === 0) {
    return { tools: [...project.tools], has: () => true, hasFile: () => true, unmatched: [] };
  }
  const wanted = only.map((p) => p.replace(/\\/g, "/").replace(/^\.\/+/, "").replace(/\/+$/, ""));
  const selected = new Set<Tool>();
  // The selected tools in project order, as filtering the project by `selected` would list them.
  const picked: Tool[] = [];
  const used = new Set<string>();
  // Each tool's fields are read once, not once per target: this loop runs over every tool of the
  // project for a staged check of one. It runs in the interpreter there, where a call costs more
  // than the test: `under` is called only past a startsWith that rules most pairs out (~0.5 ms of
  // a first staged check on 1,000 tools), and the tools are not filtered again through a closure.
  const tools = project.tools;
  const targets = wanted.length;
  const holdsAll = wanted.map(holdsEverything);
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    const id = tool.id;
    const builtin = tool.form === "builtin";
    const manifest = tool.manifestFile;
    // A path inside a directory tool selects the tool.
    const root = tool.form === "directory" ? tool.root : "";
    let hit = false;
    for (let j = 0; j < targets; j++) {
      const w = wanted[j]!;
      if (id === w || (!builtin && (((holdsAll[j] || manifest.startsWith(w)) && under(manifest, w)) || (root !== "" && (root === "." || w.startsWith(root)) && under(w, root))))) {
        hit = true;
        used.add(w);
      }
    }
    if (hit) {
      selected.add(tool);
      picked.push(tool);
    }
  }
  const roots = [...selected].filter((t) => t.form === "directory").map((t) => t.root);
  const hasFile = (file: string) => wanted.some((w) => under(file, w)) || roots.some((r) => under(file, r)) || [...selected].some((t) => t.manifestFile === file);
  for (const w of wanted) if (!used.has(w) && project.findings.some((f) => under(f.file, w))) used.add(w);
  return {
    tools: picked,
    has: (tool) => selected.has(tool),
    hasFile,
    unmatched: only.filter((_, i) => !used.has(wanted[i]!)),
  };
}

/** Runs every layer over the project (synchronously; syntax verdicts only when given). */
export function checkProject(project: Project, options: CheckOptions = {}): CheckResult {
  const scope = resolveScope(project, options.only);
  const ctx: LayerContext = {
    index: indexTools(project.tools),
    strict: options.strict === true,
    escapedPaths: new Set(project.findings.filter((f) => f.rule === "security/symlink-escape").map((f) => f.file)),
    childSchemaMemo: options.childSchemaMemo,
    ...(options.remoteRecords ? { remoteRecords: options.remoteRecords } : {}),
    ...(options.notInstalled ? { notInstalled: options.notInstalled } : {}),
  };
  const findings: Finding[] = project.findings.filter((f) => scope.hasFile(f.file));
  const parameterMemo: ParameterMemo = new Map();
  const ignoreComments: IgnoreComments[] = [];
  for (const tool of scope.tools) {
    if (tool.ignores) ignoreComments.push({ file: tool.manifestFile, tool: tool.id, directives: tool.ignores });
    const universal = checkUniversal(tool);
    findings.push(...universal);
    if (options.remoteRecords && isRemoteTool(tool) && !isPublished(tool, options.remoteRecords)) findings.push(remoteUnlocked(tool, options.remoteRecords));
    if (universal.some((f) => f.rule === "universal/not-a-mapping")) continue;
    if ((TOOL_TYPES as readonly string[]).includes(tool.type)) findings.push(...checkType(tool, ctx));
    findings.push(...checkSecurity(tool, ctx));
    findings.push(...checkPackages(tool));
    findings.push(...checkMagray(tool, ctx));
    findings.push(...checkParameters(tool, parameterMemo));
    findings.push(...checkOwnChildSchemas(tool, options.childSchemaMemo));
  }
  findings.push(...duplicateIds(project.tools, scope));
  findings.push(...checkChains(scope.tools, scope.has, ctx));
  findings.push(...checkChildSchemas(project.tools, scope.tools, scope.has, ctx));
  if (options.syntax) findings.push(...syntaxFindings(planSyntaxChecks(scope.tools), options.syntax));
  const entries = project.ignoreFile ? scopeIgnoreEntries(project.ignoreFile, project.tools, options.complete) : { entries: [], findings: [] };
  // What is wrong with the ignore file is said by every check: each one's verdict reads it.
  findings.push(...entries.findings);
  return finish(findings, scope, options, ignoreComments, entries.entries);
}

/**
 * The ignore file's entries as this check applies them (ignores.ts), and what is wrong with the
 * file; with `complete` "all", an entry naming a tool the project does not have is wrong too.
 */
function scopeIgnoreEntries(file: IgnoreFileText, tools: readonly Tool[], complete: CheckOptions["complete"]): { entries: ScopedIgnoreEntry[]; findings: Finding[] } {
  const parsed = parseIgnoreFile(file);
  const findings = parsed.findings;
  const entries: ScopedIgnoreEntry[] = [];
  const ids = complete === "all" ? new Set(tools.map((t) => t.id)) : undefined;
  for (const e of parsed.entries) {
    if (ids && e.tool !== undefined && !ids.has(e.tool)) {
      const near = suggest(e.tool, [...ids]);
      findings.push(fileFinding("ignore/invalid", IGNORE_FILE, `the entry for ${e.rule} names the tool "${e.tool}", which the project does not have, so it ignores nothing`, near ? `did you mean "${near}"?` : "name the tool by its id, as kiwi check prints it", { line: e.line, column: e.column }));
      continue;
    }
    // A project-wide entry (a rule alone) is judged only by a check of everything.
    const narrowed = e.tool !== undefined || e.file !== undefined;
    const judged = (t: Tool) => (e.tool === undefined || t.id === e.tool) && (e.file === undefined || holdsFile(t, e.file));
    const report = complete === "all" || (narrowed && complete !== undefined && complete.some(judged));
    entries.push({ ...e, report });
  }
  return { entries, findings };
}

/** A tool in .ai/tools/.remote/ the lockfile does not record as remote (CheckOptions.remoteRecords). */
function remoteUnlocked(tool: Tool, records: RemoteRecords): Finding {
  const lock = records.lockfile === "absent" ? "the project has no tool.lock.json to record it" : records.lockfile === "unreadable" ? "tool.lock.json cannot be read to tell" : `tool.lock.json records no remote tool "${tool.id}"`;
  return toolFinding(
    tool,
    "security/remote-unlocked",
    "",
    `the tool is in ${tool.root}, where kiwi add and kiwi install place the tools of a registry, but ${lock}: it is checked as the project's own`,
    `move it out of .ai/tools/.remote/ to keep it as your own tool (kiwi install removes a folder there that tool.lock.json records no remote tool of), or take it from its registry with "kiwi add <registry>/<repository>:<tag>"; if a commit brought it, remove it from git too (git rm -r --cached ${tool.root})`,
  );
}

/** Whether a finding in `file` (project-relative) can be about `tool`: its manifest, or a file in its folder. */
function holdsFile(tool: Tool, file: string): boolean {
  return manifestPathOf(tool.manifestFile) === file || (tool.form === "directory" && (tool.root === "." || tool.root === "" || file.startsWith(`${tool.root}/`)));
}

/**
 * Adds findings computed later (syntax verdicts, credentials in a tool's files) to a result, keeping
 * order and counts right. The ignore comments, with `extraComments` (those of the tools' other
 * files), are judged again over all of them: one may name a rule only these report.
 */
export function withFindings(result: CheckResult, extra: readonly Finding[], options: CheckOptions = {}, extraComments: readonly IgnoreComments[] = []): CheckResult {
  // The findings about comments and entries are judged again over all of them; those about the
  // ignore file's own text (not about what an entry let through) stay as they are.
  const own = result.findings.filter((f) => !f.rule.startsWith("ignore/") || (f.file === IGNORE_FILE && (f.rule === "ignore/invalid" || f.rule === "ignore/expired")));
  const ignored = result.ignored.map(({ ignoredBy: _, ...f }) => f);
  const merged = finish([...own, ...ignored, ...extra], undefined, options, [...result.ignoreComments, ...extraComments], result.ignoreEntries);
  return { ...merged, toolsChecked: result.toolsChecked, unmatched: result.unmatched };
}

/** `path` is `dir` or inside it ("" and "." hold everything); no string is built (it runs per tool and target). */
function under(path: string, dir: string): boolean {
  if (holdsEverything(dir)) return true;
  return path.startsWith(dir) && (path.length === dir.length || path.charCodeAt(dir.length) === 47 /* "/" */);
}

/** `dir` holds every path (under's first case): a path need not start with it to be under it. */
function holdsEverything(dir: string): boolean {
  return dir === "" || dir === ".";
}

function duplicateIds(tools: readonly Tool[], scope: Scope): Finding[] {
  // Only ids of tools in scope can be reported: a staged check of one tool groups one id, not all.
  const ids = new Set<string>();
  for (const tool of scope.tools) if (tool.form !== "builtin") ids.add(tool.id);
  const byId = new Map<string, Tool[]>();
  for (const tool of tools) {
    if (tool.form === "builtin" || !ids.has(tool.id)) continue;
    const list = byId.get(tool.id);
    if (list) list.push(tool);
    else byId.set(tool.id, [tool]);
  }
  const out: Finding[] = [];
  for (const [id, list] of byId) {
    if (list.length < 2) continue;
    for (const tool of list) {
      if (!scope.has(tool)) continue;
      const others = list.filter((t) => t !== tool).map((t) => t.manifestFile);
      out.push(toolFinding(tool, "universal/duplicate-id", tool.pointers.id ?? "", `tool id "${id}" is also used by ${others.join(", ")}`, "give each tool its own id"));
    }
  }
  return out;
}

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 } as const;

/**
 * Escalates --strict rules, drops built-ins' non-errors, dedupes, lets through what ignore comments
 * and the ignore file's entries name, and sorts by file and position.
 */
function finish(findings: Finding[], scope: Scope | undefined, options: CheckOptions, ignoreComments: IgnoreComments[], ignoreEntries: ScopedIgnoreEntry[]): CheckResult {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const f of findings) {
    if (options.strict && f.severity === "warning" && ruleInfo(f.rule).strict) f.severity = "error";
    // Built-ins are checked like any tool, but only a real error about one is worth a user's time.
    if (f.file.startsWith("<builtin>/") && f.severity !== "error") continue;
    const key = `${f.rule}\0${f.file}\0${f.line}\0${f.column}\0${f.pointer}\0${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  const { kept, ignored } = applyIgnores(out, ignoreComments, ignoreEntries);
  kept.sort(byPosition);
  ignored.sort(byPosition);
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of kept) counts[f.severity]++;
  return {
    ok: counts.error === 0,
    findings: kept,
    // A built-in counts when it was named (kiwi check python_runtime checks it): in a check of
    // everything, the count is the project's own tools.
    toolsChecked: scope ? (options.only !== undefined && options.only.length > 0 ? scope.tools.length : scope.tools.filter((t) => t.form !== "builtin").length) : 0,
    unmatched: scope?.unmatched ?? [],
    counts,
    ignored,
    ignoreComments,
    ignoreEntries,
  };
}

function byPosition(a: Finding, b: Finding): number {
  return cmp(a.file, b.file) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0) || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || cmp(a.rule, b.rule) || cmp(a.message, b.message);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
