// The project a command works on, as discovery finds it (manifest/project-io.ts findProjectRoot):
// commands name findings from the folder kiwi runs in and may not reach manifest/ themselves.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { KiwiError } from "../errors.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { findProjectRoot } from "../manifest/project-io.ts";

/** The nearest folder at or above `cwd` that holds `.ai/tools/`; undefined outside a project. */
export function projectAround(cwd: string): string | undefined {
  try {
    return findProjectRoot(cwd);
  } catch (error) {
    if (error instanceof KiwiError && error.code === "E_NO_PROJECT") return undefined;
    throw error;
  }
}

/**
 * `find()`, whose E_NO_PROJECT is made precise when a folder at or above `cwd` kept its
 * tool.lock.json after its last tool was deleted (git removes the emptied .ai/tools/): no project
 * is left to lock, install or verify, and the error says what to do.
 */
export function leftoverLockfileExplained<T>(cwd: string, find: () => T): T {
  try {
    return find();
  } catch (error) {
    if (!(error instanceof KiwiError) || error.code !== "E_NO_PROJECT" || !existsSync(cwd)) throw error;
    for (let dir = cwd; ; dir = dirname(dir)) {
      const lockfile = join(dir, LOCKFILE_NAME);
      if (existsSync(lockfile)) {
        throw new KiwiError("E_NO_PROJECT", `${lockfile} is left, but ${dir} has no .ai/tools/ folder any more (its last tool was deleted), so there is no project`, {
          hint: `if the project keeps no tools, delete the lockfile too ("git rm ${LOCKFILE_NAME}" there); else add a tool to .ai/tools/ and run "kiwi lock" again`,
        });
      }
      if (dirname(dir) === dir) throw error;
    }
  }
}
