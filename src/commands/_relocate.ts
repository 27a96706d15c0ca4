// Findings named from where kiwi was started: a project's findings carry project-relative paths
// (what --json, SARIF and .ai/kiwi-ignore.yaml name), and human output names each file as a
// terminal or editor opens it from the current folder, as tsc and ruff do.
import { join, relative, sep } from "node:path";
import type { Finding, IgnoredFinding } from "../findings/verdict.ts";
import { projectAround } from "../ops/project-root-io.ts";

/** A finding's file, relative to `cwd` (projects below it keep their prefix; built-ins stay as named). */
export function relocate<F extends Finding>(f: F, root: string, cwd: string): F {
  if (root === cwd || f.file.startsWith("<")) return f;
  return { ...f, file: display(join(root, f.file), cwd) };
}

/** An ignored finding relocated, with the ignore file that let it through (a comment's line stays its file's). */
export function relocateIgnored(f: IgnoredFinding, root: string, cwd: string): IgnoredFinding {
  const moved = relocate(f, root, cwd);
  if (f.ignoredBy.file === undefined || root === cwd) return moved;
  return { ...moved, ignoredBy: { ...f.ignoredBy, file: display(join(root, f.ignoredBy.file), cwd) } };
}

/** `abs` relative to `cwd`, with `/` separators. */
export function display(abs: string, cwd: string): string {
  return relative(cwd, abs).split(sep).join("/");
}

/**
 * Findings of the project at `root` (by default the one around `cwd`, which lock, install, add,
 * exec… work on from there), named from `cwd` for human output; --json, SARIF and the ignore file
 * keep project-relative paths. Without a project, as they are.
 */
export function findingsFromHere<F extends Finding>(findings: readonly F[], cwd: string, root = projectAround(cwd)): F[] {
  return root === undefined ? [...findings] : findings.map((f) => relocate(f, root, cwd));
}
