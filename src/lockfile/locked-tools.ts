// A lockfile's tool entries as the staged check reads them: every id, an entry by id, and the ids
// of the entries a changed path touches. From a parsed lockfile, or in place from text kiwi rendered
// (rendered-tools.ts), each entry parsed when first asked for: the same entries JSON.parse of the
// whole file gives, without building 1,000 of them (or cutting 1,000 blocks) to read the few a
// commit touches. Pure.
import { KiwiError } from "../errors.ts";
import type { LockedTool } from "../schema/lockfile.ts";
import { type RenderedTools, findRenderedBlock, renderedBlockAt, renderedIds, renderedIdsTouchedByAny } from "./rendered-tools.ts";
import { NOT_AN_ENTRY, entryOfBlock } from "./tool-blocks.ts";

export interface LockedTools {
  /** Every locked tool id. */
  ids(): readonly string[];
  /** The entry of `id`; undefined when the lockfile has none (an own entry: "constructor" is not inherited from Object). */
  get(id: string): LockedTool | undefined;
  /** The ids of the entries any of the changed `paths` touches (its own file's, or a directory manifest's in a folder above it), each once. */
  touchedByAny(paths: readonly string[]): readonly string[];
}

/** The entries of a parsed lockfile's `tools`. */
export function lockedToolsOf(tools: Record<string, LockedTool>): LockedTools {
  return {
    ids: () => Object.keys(tools),
    get: (id) => (Object.hasOwn(tools, id) ? tools[id] : undefined),
    touchedByAny: (paths) => Object.keys(tools).filter((id) => paths.some((path) => touches(path, tools[id]!.source))),
  };
}

/** A path touches an entry whose source is that path, or a directory manifest in a folder above it. */
export function touches(path: string, source: string): boolean {
  if (path === source) return true;
  const sourceDir = source.includes("/") ? source.slice(0, source.lastIndexOf("/")) : "";
  return /(^|\/)tool\.(ya?ml|json)$/.test(source) && path.startsWith(`${sourceDir}/`);
}

/**
 * The entries of text kiwi rendered, read in place: a rendered block is one whole JSON member, so
 * parsing it alone gives the value parsing the file gives.
 */
export function lockedToolsOfRendered(view: RenderedTools): LockedTools {
  const parsed = new Map<string, LockedTool>();
  let ids: string[] | undefined;
  return {
    ids: () => (ids ??= renderedIds(view)),
    get(id) {
      const known = parsed.get(id);
      if (known !== undefined) return known;
      const block = renderedBlockAt(view, findRenderedBlock(view, id));
      if (block === undefined) return undefined;
      const value = entryOfBlock(block.block, id);
      // Rendered text holds only whole members; anything else is a bug, never a guess.
      if (value === NOT_AN_ENTRY) throw new KiwiError("E_INTERNAL", `the lockfile block of ${id} was taken as rendered but is not one JSON member`);
      parsed.set(id, value as LockedTool);
      return value as LockedTool;
    },
    touchedByAny: (paths) => renderedIdsTouchedByAny(view, paths),
  };
}
