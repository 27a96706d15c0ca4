// `kiwi init` as a core operation: write the missing examples, then lock the tree when it has no
// lockfile yet. An existing tool.lock.json is never rewritten (it may hold changes the user has
// not locked on purpose); the caller hints "kiwi lock" instead.
import { existsSync } from "node:fs";
import type { Context } from "../context.ts";
import { KiwiError, toKiwiError } from "../errors.ts";
import { lockProject } from "./lock-io.ts";
import { lockfilePath } from "../lockfile/fs.ts";
import { LOCKFILE_NAME } from "../lockfile/parse.ts";
import { type ScaffoldResult, writeScaffold } from "../init/scaffold-io.ts";

export type LockStatus = "written" | "kept" | "skipped" | "failed";

export interface InitResult extends ScaffoldResult {
  lockfile: { path: string; status: LockStatus; error?: KiwiError };
}

/** Scaffolds `ctx.cwd` and locks it unless a lockfile exists or `lock` is false. Never throws for a failed lock. */
export async function initProject(ctx: Context, options: { lock: boolean }): Promise<InitResult> {
  const scaffold = writeScaffold(ctx.cwd);
  const path = lockfilePath(scaffold.root);
  if (existsSync(path)) return { ...scaffold, lockfile: { path, status: "kept" } };
  if (!options.lock) return { ...scaffold, lockfile: { path, status: "skipped" } };
  try {
    // Files only: MCP interfaces are pinned on first use ("auto" mode) or by "kiwi mcp pin", so
    // init never needs the network.
    const locked = await lockProject({ ...ctx, cwd: scaffold.root });
    if (locked.written) scaffold.created.push(LOCKFILE_NAME);
    return { ...scaffold, lockfile: { path, status: "written" } };
  } catch (error) {
    const kiwiError = toKiwiError(error);
    if (kiwiError.code === "E_INTERNAL") throw kiwiError;
    return { ...scaffold, lockfile: { path, status: "failed", error: kiwiError } };
  }
}
