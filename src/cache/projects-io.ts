// The registry of projects that use this cache (kiwi cache prune keeps what their lockfiles
// reference), and whether the process that owns a lock or temp file still lives.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-io.ts";
import { projectRelPath } from "./cache-layout.ts";
import type { Store } from "./store-io.ts";

/** Records that `root` uses this cache, so prune keeps what its lockfile references. */
export function registerProject(store: Store, root: string): void {
  const path = join(store.dir, projectRelPath(root));
  if (existsSync(path)) return;
  writeFileAtomic(path, `${JSON.stringify({ root })}\n`, { faults: store.faults });
}

/** True when a process with this pid exists on this machine. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes each entry of `dir` whose name carries the pid of another process that no longer runs
 * (`ownerOf` reads it, or gives undefined for names that are not leftovers): what a writer killed
 * with -9 before its rename left behind. A missing folder is nothing to do.
 */
export function removeDeadLeftovers(dir: string, ownerOf: (name: string) => number | undefined, remove: (path: string) => void): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = ownerOf(name);
    if (pid !== undefined && Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !isAlive(pid)) remove(join(dir, name));
  }
}
