// The registry of projects that use this cache (kiwi cache prune keeps what their lockfiles
// reference), and whether the process that owns a lock or temp file still lives.
import { existsSync } from "node:fs";
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
