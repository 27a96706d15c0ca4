// `kiwi lock` as a core operation: the lock index answers first (an unchanged tree, or files changed
// inside tools it can pin: ops/lock-incremental-io.ts); otherwise the full lock runs
// (ops/lock-full-io.ts, loaded only then, so an unchanged tree never loads discovery or the validator).
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { KiwiError } from "../errors.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { faultsFromEnv } from "../cache/faults-io.ts";
import type { Context } from "../context.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import { lockfilePath } from "../lockfile/fs.ts";
import { lockFromIndex } from "./lock-incremental-io.ts";
import { LOCKFILE_VERSION } from "../schema/vocabulary.ts";
import type { LockOptions, LockResult } from "./lock-full-io.ts";

export type { LockOptions, LockResult } from "./lock-full-io.ts";

/** Hashes the project, validates it and writes tool.lock.json if anything changed. */
export async function lockProject(ctx: Context, options: LockOptions = {}): Promise<LockResult> {
  const root = lockedProjectRoot(ctx.cwd);
  if (!options.needTree && !options.record) {
    // The lock index: an unchanged tree, or files changed inside tools it can pin, answered without discovery.
    const indexed = await lockFromIndex(ctx.cacheDir, root, options.strict === true, ctx.now(), faultsFromEnv(ctx.env), options.onWait);
    if (indexed) {
      const { text, ...rest } = indexed;
      if (text !== undefined && text.endsWith('  "mcp_servers": {}\n}\n') && !text.includes('\n  "remote": ') && !text.includes('\n  "dependencies": ')) {
        // Tells kiwi exec these bytes are kiwi's own (no pins, remote records or packages to check).
        const { rememberWrittenLockfile } = await import("../exec/chain-io.ts");
        rememberWrittenLockfile(ctx.cacheDir, text, { lockfileVersion: LOCKFILE_VERSION, tools: {}, mcp_servers: {} });
      }
      return { root, lockfile: lockfilePath(root), warnings: [], findings: [], ...rest };
    }
  }
  const { lockFull } = await import("./lock-full-io.ts");
  return lockFull(ctx, root, options);
}

/**
 * The project to lock. A folder that kept its tool.lock.json when its last tool was deleted (git
 * removes the emptied .ai/tools/) is no project, and the error says so and what to do.
 */
function lockedProjectRoot(cwd: string): string {
  try {
    return findProjectRoot(cwd);
  } catch (error) {
    if (!(error instanceof KiwiError) || error.code !== "E_NO_PROJECT" || !existsSync(cwd)) throw error;
    for (let dir = cwd; ; dir = dirname(dir)) {
      if (existsSync(lockfilePath(dir))) {
        throw new KiwiError("E_NO_PROJECT", `${lockfilePath(dir)} is left, but ${dir} has no .ai/tools/ folder any more (its last tool was deleted), so there is no project to lock`, {
          hint: `if the project keeps no tools, delete the lockfile too ("git rm ${LOCKFILE_NAME}" there); else add a tool to .ai/tools/ and run "kiwi lock" again`,
        });
      }
      if (dirname(dir) === dir) throw error;
    }
  }
}
