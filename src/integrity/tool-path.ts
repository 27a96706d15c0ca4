// Which paths name a file of a tool (shared/specs/integrity.md: the names a tool's file set ignores,
// and the one rule for a path inside a tool, at the two strictnesses its callers need). Pure.

/** Paths never counted as a tool's files (shared/specs/integrity.md: "documented as ignored"). */
export const IGNORED_NAMES: ReadonlySet<string> = new Set([
  ".git",
  ".hg",
  ".svn",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".DS_Store",
]);

/**
 * - `written`: a path as a manifest's author wrote it (entrypoint, cwd, files, a command with a
 *   slash): kiwi normalises `./a//b` and `a\b` itself, but no shell expands `~`, so a home-relative
 *   path is refused. kiwi check judges it (security/path) and kiwi exec refuses it again before
 *   running, so an unchecked tree cannot run what check would refuse.
 * - `locked`: kiwi's own canonical form (the lock, a registry artifact, the store's run
 *   directories), compared byte for byte, so `/` separators only and no `.` or empty segment; a
 *   file may well be named `~notes`.
 */
export type ToolPathForm = "written" | "locked";

/** Why `path` cannot name a file inside a tool (NUL, absolute, a `..` segment, ...), or undefined. */
export function toolPathProblem(path: string, form: ToolPathForm): string | undefined {
  if (path.includes("\0")) return "contains a NUL byte";
  // Character tests, not regular expressions: exec checks its entry points on every call, and each
  // regular expression compiles on its first use.
  if (path[0] === "/" || path[0] === "\\" || (path[1] === ":" && isAsciiLetter(path.charCodeAt(0)))) return "is absolute";
  if (form === "locked") {
    if (path.includes("\\")) return "contains a backslash";
    const segments = path.split("/");
    if (segments.some((s) => s === "." || s === "..")) return "has a . or .. segment";
    if (segments.includes("")) return "has an empty segment";
    return undefined;
  }
  if (path.startsWith("~")) return "is relative to a home directory";
  if (path.replaceAll("\\", "/").split("/").includes("..")) return "contains '..'";
  return undefined;
}

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
