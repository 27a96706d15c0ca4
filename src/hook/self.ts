// How to run this very kiwi again from a hook script: the compiled binary itself, or bun plus
// the entry file when running from source (development).

/** The argv prefix that starts the running kiwi. */
export function kiwiInvocation(): string[] {
  // A compiled binary's entry lives in Bun's embedded file system (`/$bunfs/…`, `B:/~BUN/…`).
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.includes("~BUN");
  return compiled ? [process.execPath] : [process.execPath, Bun.main];
}
