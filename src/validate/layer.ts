// What every validation layer receives: the whole tree (chain rules see everything), the options,
// and small shared helpers. Pure.
import type { Tool } from "../manifest/model.ts";
import type { ToolIndex } from "../resolve/chain.ts";
import { escapePointer } from "../integrity/canonical.ts";

export interface LayerContext {
  /** Every tool in the tree, built-ins included (project tools first). */
  index: ToolIndex;
  strict: boolean;
  /** Project-relative paths discovery reported as symbolic links leaving their tool. */
  escapedPaths: ReadonlySet<string>;
}

/** The direct executor tool, when it exists. */
export function executorOf(tool: Tool, ctx: LayerContext): Tool | undefined {
  return tool.executor ? ctx.index.get(tool.executor.id) : undefined;
}

/** A JSON pointer segment, escaped. */
export function seg(key: string | number): string {
  return escapePointer(String(key));
}

/** Project-relative path of a file of the tool (`root/rel`, or `rel` when the root is the project). */
export function toolPath(tool: Tool, rel: string): string {
  return tool.root ? `${tool.root}/${rel}` : rel;
}

/** `./a//b` -> `a/b`. */
export function normalizeRel(path: string): string {
  return path
    .split(/[\\/]+/)
    .filter((p) => p !== "" && p !== ".")
    .join("/");
}

