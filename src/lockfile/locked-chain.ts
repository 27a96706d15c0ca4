// The resolved chain is derivable from the lockfile: follow each entry's executor (id@version)
// until a tool with none (a primitive). Pure.
import { KiwiError } from "../errors.ts";
import type { LockedTool, Lockfile } from "../schema/lockfile.ts";

/** Longest chain kiwi follows (tool, runtimes…, primitive) before calling it a loop. */
export const MAX_CHAIN_LENGTH = 16;

/** The locked chain of a tool as `id@version` refs, from the tool itself down to its primitive. */
export function resolveLockedChain(lock: Lockfile, toolId: string): string[] {
  const chain: string[] = [];
  let id: string | undefined = toolId;
  while (id !== undefined) {
    const entry: LockedTool | undefined = lock.tools[id];
    if (!entry) {
      throw new KiwiError("E_LOCK_STALE", `tool "${id}" is not in tool.lock.json`, { hint: 'run "kiwi lock"' });
    }
    const ref = `${id}@${entry.version}`;
    if (chain.includes(ref) || chain.length >= MAX_CHAIN_LENGTH) {
      throw new KiwiError("E_CHAIN", `the locked chain of "${toolId}" loops or is too deep: ${[...chain, ref].join(" -> ")}`, {
        hint: 'fix the executors and run "kiwi lock"',
      });
    }
    chain.push(ref);
    id = entry.executor === null ? undefined : entry.executor.slice(0, entry.executor.lastIndexOf("@"));
  }
  return chain;
}
