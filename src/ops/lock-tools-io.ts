// `kiwi lock` end to end: with --from, refuse unless the tree still matches the kiwi_mcp lockfile;
// then the lock step (./lock-io.ts, shared with install, init, add and update) and the MCP step that
// pins servers without a pin (./mcp-lock-step-io.ts). The kiwi_mcp reader and the MCP SDK load only
// when they are needed.
import type { Context } from "../context.ts";
import { type LockOptions, type LockResult, lockProject } from "./lock-io.ts";
import type { LockPinReport } from "./mcp-lock-io.ts";
import { pinAfterLock } from "./mcp-lock-step-io.ts";

export interface LockToolsOptions extends Pick<LockOptions, "strict" | "onProgress" | "onWait"> {
  /** A kiwi_mcp lockfile (or its .ai/lockfiles store) the tree must still match before anything is written. */
  from?: string;
  /** Called once tool.lock.json is written (or found current), before any MCP server is started. */
  onLocked?: (result: LockResult) => void;
  /** Called as each unpinned MCP server is started. */
  onMcpStart?: (server: string) => void;
}

export interface LockToolsResult extends LockResult {
  /** What the MCP step did for each unpinned server (empty without mcp_server tools). */
  mcpPins: LockPinReport[];
}

/** `kiwi lock`: the --from check, the lock, then pins for unpinned MCP servers. */
export async function lockTools(ctx: Context, options: LockToolsOptions = {}): Promise<LockToolsResult> {
  if (options.from !== undefined) {
    // Nothing is written unless every chain the kiwi_mcp lockfile pins still hashes the same.
    const { verifyKiwiMcpLockfiles } = await import("./kiwi-mcp-verify-io.ts");
    const { error } = verifyKiwiMcpLockfiles(ctx, options.from, `kiwi lock --from ${options.from} wrote nothing`);
    if (error) throw error;
  }
  const result = await lockProject(ctx, { strict: options.strict, onProgress: options.onProgress, onWait: options.onWait });
  options.onLocked?.(result);
  const mcpPins = await pinAfterLock(ctx, result, { strict: options.strict === true, onStart: options.onMcpStart });
  return { ...result, mcpPins };
}
