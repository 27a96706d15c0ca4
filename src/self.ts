// How to run this very kiwi again (from a hook script, or as a helper program inside a sandbox):
// the compiled binary itself, or bun plus the entry file when running from source (development).

/** True in the compiled binary, whose entry lives in Bun's embedded file system (`/$bunfs/…`, `B:/~BUN/…`). */
export function isCompiled(): boolean {
  return Bun.main.startsWith("/$bunfs/") || Bun.main.includes("~BUN");
}

/** The argv prefix that starts the running kiwi. */
export function kiwiInvocation(): string[] {
  return isCompiled() ? [process.execPath] : [process.execPath, Bun.main];
}
