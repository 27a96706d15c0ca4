// `kiwi lock` as a core operation: the lock index answers first (an unchanged tree, or files changed
// inside tools it can pin: ops/lock-incremental-io.ts); otherwise the full lock runs
// (ops/lock-full-io.ts, loaded only then, so an unchanged tree never loads discovery or the validator).
import { faultsFromEnv } from "../cache/faults-io.ts";
import type { Context } from "../context.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import { lockfilePath } from "../lockfile/fs.ts";
import { lockFromIndex } from "./lock-incremental-io.ts";
import { leftoverLockfileExplained } from "./project-root-io.ts";
import { LOCKFILE_VERSION } from "../schema/vocabulary.ts";
import type { LockOptions, LockResult } from "./lock-full-io.ts";

export type { LockOptions, LockResult } from "./lock-full-io.ts";

/** Hashes the project, validates it and writes tool.lock.json if anything changed. */
export async function lockProject(ctx: Context, options: LockOptions = {}): Promise<LockResult> {
  const root = leftoverLockfileExplained(ctx.cwd, () => findProjectRoot(ctx.cwd));
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

