// `kiwi check --staged [files…]`: the pre-commit form of check. Loaded lazily by check.ts; the
// selection and lock logic live in src/ops/staged-io.ts, this file only renders and sets the code.
import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { type StagedProject, checkStaged } from "../ops/staged-io.ts";
import { summarizeDiff } from "../lockfile/lock-diff.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { conflictHint } from "../lockfile/parse.ts";
import { type FindingFormat, findingsDocument, renderFindingsHuman, renderFindingsSummary, sarifDocument } from "../ui/findings-render.ts";
import { renderFileDiff } from "../ui/lock-render.ts";
import { colors, showJson, showNote, showResult } from "../ui/output.ts";
import { display, relocate, relocateIgnored } from "./_relocate.ts";

/**
 * How to bring a project's lockfile up to date, from where kiwi was started: a project below it (a
 * monorepo checked from its top) is locked with --cwd, and its lockfile added by its path.
 */
function lockHint(root: string, cwd: string): string {
  const dir = display(root, cwd);
  if (dir === "") return `run "kiwi lock", then "git add ${LOCKFILE_NAME}"`;
  return `run "kiwi lock --cwd ${shellWord(dir)}", then "git add ${shellWord(`${dir}/${LOCKFILE_NAME}`)}"`;
}

function shellWord(word: string): string {
  return /^[\w./@+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** Runs the staged check and prints it in `format`; returns the exit code. */
export async function runStagedCheck(context: Context, options: { files: string[]; strict?: boolean; format: FindingFormat }): Promise<number> {
  // Project roots come back as real paths; so must cwd be, for paths relative to it.
  const ctx = { ...context, cwd: realpathSync(context.cwd) };
  const started = ctx.now();
  const projects = await checkStaged({ cwd: ctx.cwd, env: ctx.env, cacheDir: ctx.cacheDir, now: ctx.now, strict: options.strict, files: options.files });
  // Human output names files from the folder kiwi runs in; --json and SARIF from the repository's
  // top, where they do not depend on that folder and a monorepo's projects stay apart.
  const base = options.format === "human" ? ctx.cwd : documentBase(projects);
  const findings = projects.flatMap((p) => p.check.findings.map((f) => relocate(f, p.root, base)));
  const ignored = projects.flatMap((p) => p.check.ignored.map((f) => relocateIgnored(f, p.root, base)));
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const toolsChecked = projects.reduce((n, p) => n + p.check.toolsChecked, 0);
  const lockProblem = oneLockError(projects.flatMap((p) => lockError(p, ctx.cwd) ?? []));
  const code = counts.error > 0 ? 1 : lockProblem ? lockProblem.exitCode : 0;

  if (options.format === "sarif") {
    showJson(sarifDocument(findings, pkg.version, ignored));
    return code;
  }
  if (options.format === "json") {
    // A lockfile problem that sets the exit code is the document's error, as any command's failure
    // is (its code and hint; the diff is the project's), named from the document's base like the rest.
    const error = counts.error === 0 ? oneLockError(projects.flatMap((p) => lockError(p, base) ?? [])) : undefined;
    showJson({ ...findingsDocument(findings, { toolsChecked, counts }, ignored), ok: code === 0, ...(error ? { error: { code: error.code, message: error.message, hint: error.hint, exitCode: error.exitCode } } : {}), staged: projects.map((p) => projectDocument(p, base)) });
    return code;
  }
  const text = renderFindingsHuman(findings, ctx);
  if (text) showResult(text);
  for (const p of projects) showProjectNotes(p, ctx);
  showNote(`${renderFindingsSummary({ toolsChecked, counts, elapsedMs: ctx.now() - started, ignored }, ctx, lockProblem !== undefined).trimEnd()}${scopeNote(projects)}`);
  if (lockProblem && counts.error === 0) throw lockProblem;
  if (lockProblem) showNote(`${colors(ctx).red("✖")} ${lockProblem.message}\n  hint: ${lockProblem.hint}`);
  return code;
}

/**
 * The folder the staged check's --json and SARIF name files from: the repository's top, as git
 * names a commit's files and code scanning resolves %SRCROOT% (a project there gets the plain
 * check's project-relative paths); given files outside a repository, their projects' common folder.
 */
function documentBase(projects: readonly StagedProject[]): string {
  const top = projects.find((p) => p.top !== undefined)?.top;
  if (top !== undefined) return top;
  const [first, ...rest] = projects.map((p) => p.root);
  if (first === undefined) return "/";
  let base = first;
  for (const root of rest) while (base !== "/" && root !== base && !root.startsWith(`${base}/`)) base = dirname(base);
  return base;
}

/**
 * The projects' lockfile problems as the one error to report: the first's code (its exit code),
 * every project's message and hint, so a commit in a monorepo learns all it must relock at once.
 */
function oneLockError(errors: KiwiError[]): KiwiError | undefined {
  const [first, ...rest] = errors;
  if (!first || rest.length === 0) return first;
  const hints = [...new Set(errors.map((e) => e.hint).filter((h): h is string => h !== undefined))];
  return new KiwiError(first.code, errors.map((e) => e.message).join("; "), { hint: hints.join("; "), ...(first.details ? { details: first.details } : {}) });
}

/** What went wrong with a project's lockfile for this commit, as the error to report. */
function lockError(p: StagedProject, cwd: string): KiwiError | undefined {
  const where = display(join(p.root, LOCKFILE_NAME), cwd);
  const hint = lockHint(p.root, cwd);
  const changes = p.lock.diff ? [...p.lock.diff.added, ...p.lock.diff.removed, ...p.lock.diff.changed].map((c) => `${c.id} ${c.kind}`) : [];
  switch (p.lock.status) {
    case "stale":
      // Only a project whose .ai/tools/ the commit empties has a message here: there is nothing left for kiwi lock to lock.
      return new KiwiError("E_LOCK_STALE", `${where}${p.lock.fromIndex ? " (as staged)" : ""} is out of date for this commit: ${changes.join(", ")}${p.lock.message ? ` (${p.lock.message})` : ""}`, {
        hint: p.lock.message ? `if the project keeps no tools, delete the lockfile too ("git rm ${shellWord(where)}"); else keep a tool in .ai/tools/, then ${hint}` : hint,
        details: { diff: summarizeDiff(p.lock.diff!) },
      });
    case "missing":
      // The message names the lockfile as the project does ("tool.lock.json does not exist"): said once, by its path from here.
      return new KiwiError("E_LOCK_MISSING", p.lock.message?.startsWith(`${LOCKFILE_NAME} `) ? `${where}${p.lock.message.slice(LOCKFILE_NAME.length)}` : `${where}: ${p.lock.message ?? "missing"}`, { hint });
    case "invalid":
      // kiwi lock refuses a lockfile it cannot read (it may hold MCP pins), so that one is first
      // taken from git; an entry edited by hand it rewrites itself.
      if (p.lock.unreadable === "conflict") return new KiwiError("E_LOCK_INVALID", p.lock.message ?? `${where} is invalid`, { hint: `${conflictHint(shellWord(where))}, then ${hint}` });
      if (p.lock.unreadable === "damaged") return new KiwiError("E_LOCK_INVALID", p.lock.message ?? `${where} is invalid`, { hint: `restore ${where} from version control ("git checkout HEAD -- ${shellWord(where)}"), then ${hint}` });
      return new KiwiError("E_LOCK_INVALID", p.lock.message ?? `${where} is invalid`, { hint: `restore ${where} from version control, or ${hint}` });
    default:
      return undefined;
  }
}

function showProjectNotes(p: StagedProject, ctx: Context): void {
  if (p.lock.status === "stale" && p.lock.diff) showNote(renderFileDiff(summarizeDiff(p.lock.diff), ctx).trimEnd());
  for (const file of p.unstaged) showNote(`warning: ${display(join(p.root, file), ctx.cwd)} has changes that are not staged; kiwi checked the working copy`);
}

function scopeNote(projects: StagedProject[]): string {
  const changed = projects.reduce((n, p) => n + p.affected.changed.length, 0);
  const dependents = projects.reduce((n, p) => n + p.affected.dependents.length, 0);
  if (projects.length === 0) return "; no tool files in this commit";
  const lock = projects.every((p) => p.lock.status === "fresh") ? `; ${LOCKFILE_NAME} is up to date for them` : "";
  const ignores = projects.some((p) => p.affected.ignoresChanged) ? "; the ignore file changed, so every tool was checked" : "";
  return `; ${changed} changed${dependents ? `, ${dependents} whose chain includes them` : ""}${lock}${ignores}`;
}

function projectDocument(p: StagedProject, base: string): Record<string, unknown> {
  return {
    project: display(p.root, base) || ".",
    changed: p.affected.changed,
    dependents: p.affected.dependents,
    gone: p.affected.gone,
    lockfile: { status: p.lock.status, from_index: p.lock.fromIndex, ...(p.lock.message ? { message: p.lock.message } : {}), ...(p.lock.diff ? { diff: summarizeDiff(p.lock.diff) } : {}) },
    unstaged: p.unstaged,
  };
}
