// A lockfile's tool entries as the staged check reads them: every id, and an entry by id. From a
// parsed lockfile, or from the text blocks of one kiwi rendered with each entry parsed when first
// asked for: the same entries JSON.parse of the whole file gives, without building 1,000 entries
// (~1 ms of a ~500 KB parse) to read the few a commit touches. Pure.
import { KiwiError } from "../errors.ts";
import type { LockedTool } from "../schema/lockfile.ts";
import { NOT_AN_ENTRY, type ToolBlocks, entryOfBlock } from "./tool-blocks.ts";

export interface LockedTools {
  /** Every locked tool id. */
  readonly ids: readonly string[];
  /** The entry of `id`; undefined when the lockfile has none (an own entry: "constructor" is not inherited from Object). */
  get(id: string): LockedTool | undefined;
}

/** The entries of a parsed lockfile's `tools`. */
export function lockedToolsOf(tools: Record<string, LockedTool>): LockedTools {
  return { ids: Object.keys(tools), get: (id) => (Object.hasOwn(tools, id) ? tools[id] : undefined) };
}

/**
 * The entries of a lockfile kiwi rendered, from its blocks (cutRenderedToolBlocks): a rendered
 * block is one whole JSON member, so parsing it alone gives the value parsing the file gives.
 */
export function lockedToolsOfBlocks(cut: ToolBlocks): LockedTools {
  const parsed = new Map<string, LockedTool>();
  return {
    ids: [...cut.blocks.keys()],
    get(id) {
      const block = cut.blocks.get(id);
      if (block === undefined) return undefined;
      let entry = parsed.get(id);
      if (entry === undefined) {
        const value = cut.rendered.has(id) ? entryOfBlock(block, id) : NOT_AN_ENTRY;
        // Only blocks of rendered text come here, and each of those is a member; anything else is a bug.
        if (value === NOT_AN_ENTRY) throw new KiwiError("E_INTERNAL", `the lockfile block of ${id} was taken as rendered but is not one JSON member`);
        entry = value as LockedTool;
        parsed.set(id, entry);
      }
      return entry;
    },
  };
}
