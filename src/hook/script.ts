// The git pre-commit hook kiwi writes: its text and how kiwi recognises its own. Pure.

/** The line that marks a hook as kiwi's; install replaces and uninstall removes only such hooks. */
export const HOOK_MARKER = "# kiwi-managed-hook: written by \"kiwi hook install\"; \"kiwi hook uninstall\" removes it";

/** Where a foreign hook goes when `--force` replaces it, so nothing the user wrote is lost. */
export const BACKUP_SUFFIX = ".pre-kiwi";

const REPLACED_PREFIX = "# kiwi-replaced: ";

/** The file name of the foreign hook this kiwi hook replaced (install --force), if any. */
export function parseReplacedHook(text: string): string | undefined {
  const line = text.split("\n", 6).find((l) => l.startsWith(REPLACED_PREFIX));
  const name = line?.slice(REPLACED_PREFIX.length).trim();
  // A bare file name only: the hook must never steer uninstall outside the hooks folder.
  return name && !name.includes("/") && !name.includes("\\") && name !== ".." ? name : undefined;
}

/** True when the hook text was written by kiwi (the marker is one of its first lines). */
export function isKiwiHook(text: string): boolean {
  return text.split("\n", 5).some((line) => line.trim() === HOOK_MARKER);
}

/** Single-quotes a word for POSIX sh, so any path survives as one argument. */
export function quoteSh(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The hook script. It prefers `$KIWI` (an explicit override: the path of a kiwi binary, run as
 * one word whatever it holds), then `kiwi` on PATH, then the binary that installed it, because
 * git GUIs often run hooks with a reduced PATH.
 */
export function renderHookScript(fallback: readonly string[], replaced?: string): string {
  const fallbackCommand = fallback.map(quoteSh).join(" ");
  const fallbackProgram = quoteSh(fallback[0] ?? "kiwi");
  return `#!/bin/sh
${HOOK_MARKER}
${replaced ? `${REPLACED_PREFIX}${replaced}\n` : ""}# Validates the staged tools (and every tool whose chain includes them) and checks that
# tool.lock.json is up to date for them. Skip once with "git commit --no-verify".
if [ -n "$KIWI" ]; then
  exec "$KIWI" check --staged
elif command -v kiwi >/dev/null 2>&1; then
  exec kiwi check --staged
elif [ -x ${fallbackProgram} ]; then
  exec ${fallbackCommand} check --staged
fi
echo "kiwi pre-commit hook: kiwi is not on PATH; install it, set KIWI=/path/to/kiwi, or run \\"kiwi hook uninstall\\"" >&2
exit 1
`;
}
