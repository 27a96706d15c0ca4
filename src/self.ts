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

/**
 * Back to JavaScriptCore's normal JIT tier-up. The binary starts with thresholds scaled up
 * (scripts/build.ts, --compile-jit-policy): kiwi's start-up code runs once, and compiling it on
 * the second core cost a warm `kiwi exec` ~3 ms of CPU. Work that runs long (validating a
 * thousand tools, speaking MCP, kiwi's filtering proxy) calls this first; pumping a tool's output
 * does not (ops/exec-io.ts). Not `kiwi lock`: its cold
 * run's code runs once per tool while a worker hashes on the second core (cli.ts says why).
 */
export function jitAtFullSpeed(): void {
  (Bun as { unsafe?: { setJITPolicy?: (scale: number) => void } }).unsafe?.setJITPolicy?.(1);
}
