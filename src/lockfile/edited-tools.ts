// Which tool entries differ between two lockfile texts (HEAD's and the one being committed), without
// JSON.parsing two ~500 KB files when kiwi wrote both: both are cut into per-tool blocks
// (tool-blocks.ts), equal blocks are equal entries and only the blocks that differ are parsed; when
// the committed text is kiwi's rendering, only the stretch where HEAD's text differs is cut, and
// HEAD's text may come as that stretch alone (HeadText). The answer is always the one parsing both
// files whole gives; any text this cannot cut, or whose blocks it cannot vouch for, is parsed
// whole. Pure.
import { NOT_AN_ENTRY, type ToolBlocks, entryOfBlock, readBlockAt, splitToolBlocks } from "./tool-blocks.ts";
import { type RenderedTools, findRenderedBlock, renderedBlockAt, renderedBlockBefore } from "./rendered-tools.ts";

/**
 * HEAD's lockfile text: whole, or told as it differs from the committed text (never built whole
 * unless needed: ~2 MB for 1,000 tools, which with the committed text and the lock index tipped a
 * first staged check into a collection): its first `same` and last `tail` characters are the
 * committed text's (the two do not overlap in either text), with `middle` between.
 */
export type HeadText = string | { same: number; tail: number; middle: string };

/** HEAD's whole text (HeadText). */
export function wholeHeadText(committed: string, head: HeadText): string {
  return typeof head === "string" ? head : `${committed.slice(0, head.same)}${head.middle}${committed.slice(committed.length - head.tail)}`;
}

/**
 * Ids whose tool entry differs between `head` (HEAD's lockfile text) and `committed` (the text
 * being committed), compared as JSON.stringify of what JSON.parse reads; "all" without a HEAD copy
 * or when HEAD's copy is not JSON. Sorted. `committed` is JSON (the caller parsed it already);
 * `rendered`, when given, is its tools section, the caller knowing it is kiwi's rendering.
 */
export function editedToolIds(committed: string, head: HeadText | undefined, rendered?: RenderedTools): string[] | "all" {
  if (head === undefined) return "all";
  const quick = rendered === undefined ? undefined : editedInStretch(committed, rendered, head);
  if (quick !== undefined) return quick;
  const whole = wholeHeadText(committed, head);
  const after = splitToolBlocks(committed);
  const before = after === undefined ? undefined : splitToolBlocks(whole, after);
  const edited = after !== undefined && before !== undefined ? editedBlocks(after, before) : undefined;
  return edited ?? editedByParsing(committed, whole);
}

/**
 * editedToolIds where the committed text is kiwi's rendering (`view`, its tools section) and HEAD's
 * differs from it in one stretch, as a relock rewrites a few entries, a tool is added or one goes:
 * the texts are compared from both ends, and only the committed blocks that reach into the
 * differing stretch, and what HEAD holds in their place, are cut and compared. HEAD's text is then
 * the committed text's blocks before and after that stretch (the same bytes, so the same members
 * in the same "tools"), with its own blocks between, which must tile it as blocks joined by ",\n"
 * (framed by the separators the committed stretch has) and name no id kept outside it: exactly
 * what splitToolBlocks would cut of HEAD. Undefined whenever that does not hold (an edit reaching
 * past the tools blocks, a HEAD block that is not one whole member where it counts, a second
 * member of an id): the caller then cuts both texts whole.
 */
export function editedInStretch(committed: string, view: RenderedTools, head: HeadText): string[] | undefined {
  const whole = typeof head === "string";
  const headLength = whole ? head.length : head.same + head.middle.length + head.tail;
  const same = whole ? commonPrefix(committed, head) : head.same;
  if (same === committed.length && same === headLength) return [];
  const tail = whole ? commonSuffix(committed, head, Math.min(committed.length, head.length) - same) : head.tail;
  const differsTo = committed.length - tail; // the committed text differs in [same, differsTo)
  if (same < view.start || differsTo > view.end) return undefined;
  // The first block not wholly in the common prefix: the one `same` falls in, or the next.
  let firstAt = renderedBlockBefore(view, same);
  let firstBlock = renderedBlockAt(view, firstAt);
  if (firstBlock && firstAt + firstBlock.block.length <= same) {
    firstAt += firstBlock.block.length + 2;
    firstBlock = renderedBlockAt(view, firstAt);
  }
  // The last block not wholly in the common suffix: the one the last differing character falls in, or the one before.
  const lastAt = renderedBlockBefore(view, differsTo - 1);
  const lastBlock = renderedBlockAt(view, lastAt);
  if (!firstBlock || !lastBlock) return undefined;
  // The stretch starts at the first block, or at the separator before it when the prefix stops short of it; likewise at its end.
  const lead = firstAt > same;
  const lastEnd = lastAt + lastBlock.block.length;
  const trail = lastEnd < differsTo;
  const from = lead ? firstAt - 2 : firstAt;
  const to = trail ? lastEnd + 2 : lastEnd;
  const headTo = to - (committed.length - headLength);
  if (headTo < from) return undefined;
  // HEAD's text is read in [from, headTo) alone: `stretch` holds it, `from` characters in.
  const stretch = whole ? head : headStretch(committed, head, headLength, from, headTo);
  const at = whole ? 0 : from;
  const inside = new Map<string, string>();
  for (let pos = firstAt; pos < to; ) {
    const block = renderedBlockAt(view, pos);
    if (!block) return undefined;
    inside.set(block.id, block.block);
    pos += block.block.length + 2;
  }
  // HEAD's blocks in the stretch. A HEAD block counts only by its text (equal to a rendered one)
  // or by parsing it: its shape is never asked (the pattern costs ~1 ms to compile).
  const mine = new Map<string, string>();
  // No block at all: the separator the committed stretch has on both sides, or on one side none.
  const none = lead && trail ? headTo - from === 2 && stretch.startsWith(",\n", from - at) : lead !== trail && headTo === from;
  if (!none) {
    let pos = from - at;
    if (lead) {
      if (!stretch.startsWith(",\n", pos)) return undefined;
      pos += 2;
    }
    const stop = (trail ? headTo - 2 : headTo) - at;
    if (stop <= pos || (trail && !stretch.startsWith(",\n", stop))) return undefined;
    for (;;) {
      // A block that would run past the stretch ends past `stop` in HEAD's whole text too: refused either way.
      const read = readBlockAt(stretch, pos, false);
      if (read === undefined || mine.has(read.id)) return undefined;
      mine.set(read.id, read.block);
      pos += read.block.length;
      if (pos === stop) break;
      if (pos > stop || !stretch.startsWith(",\n", pos)) return undefined;
      pos += 2;
    }
  }
  const edited: string[] = [];
  for (const [id, block] of mine) {
    // A HEAD id also kept outside the stretch would be a second member of that name.
    if (!inside.has(id) && findRenderedBlock(view, id) !== -1) return undefined;
    if (inside.get(id) === block) continue; // the committed block is rendered: one whole member
    const was = entryOfBlock(block, id);
    if (was === NOT_AN_ENTRY) return undefined;
    const now = inside.has(id) ? entryOfBlock(inside.get(id)!, id) : absent(id);
    if (JSON.stringify(now) !== JSON.stringify(was)) edited.push(id);
  }
  for (const [id, block] of inside) {
    if (mine.has(id)) continue;
    if (JSON.stringify(entryOfBlock(block, id)) !== JSON.stringify(absent(id))) edited.push(id);
  }
  return edited.sort();
}

/** HEAD's text in [from, to) (positions in HEAD's whole text), from the committed text and the middle alone. */
function headStretch(committed: string, head: { same: number; middle: string }, headLength: number, from: number, to: number): string {
  const middleEnd = head.same + head.middle.length;
  const shift = committed.length - headLength; // where HEAD's tail sits in the committed text
  let out = "";
  if (from < head.same) out += committed.slice(from, Math.min(to, head.same));
  if (to > head.same && from < middleEnd) out += head.middle.slice(Math.max(from, head.same) - head.same, Math.min(to, middleEnd) - head.same);
  if (to > middleEnd) out += committed.slice(Math.max(from, middleEnd) + shift, to + shift);
  return out;
}

/** Chunk sizes the common ends are measured in: whole chunks compare natively, the last one a character at a time. */
const CHUNKS = [4096, 64, 1];

/** How many leading characters `a` and `b` share. */
function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let at = 0;
  for (const size of CHUNKS) while (at + size <= max && a.slice(at, at + size) === b.slice(at, at + size)) at += size;
  return at;
}

/** How many trailing characters `a` and `b` share, at most `max`. */
function commonSuffix(a: string, b: string, max: number): number {
  let n = 0;
  for (const size of CHUNKS) while (n + size <= max && a.slice(a.length - n - size, a.length - n) === b.slice(b.length - n - size, b.length - n)) n += size;
  return n;
}

/** editedToolIds over cut texts; undefined when a block is not what it must be (then both files are parsed). */
function editedBlocks(after: ToolBlocks, before: ToolBlocks): string[] | undefined {
  const edited: string[] = [];
  for (const [id, block] of after.blocks) {
    const old = before.blocks.get(id);
    if (old === block) {
      // Equal text is an equal entry only if it is one whole member (see splitToolBlocks).
      if (!after.rendered.has(id) && entryOfBlock(block, id) === NOT_AN_ENTRY) return undefined;
      continue;
    }
    const now = entryOfBlock(block, id);
    const was = old === undefined ? absent(id) : entryOfBlock(old, id);
    if (now === NOT_AN_ENTRY || was === NOT_AN_ENTRY) return undefined;
    if (JSON.stringify(now) !== JSON.stringify(was)) edited.push(id);
  }
  for (const [id, block] of before.blocks) {
    if (after.blocks.has(id)) continue;
    const was = entryOfBlock(block, id);
    if (was === NOT_AN_ENTRY) return undefined;
    if (JSON.stringify(was) !== JSON.stringify(absent(id))) edited.push(id);
  }
  return edited.sort();
}

/**
 * What parsing both files gives for an id one side lacks: a lookup on a plain object, which for
 * "__proto__" or "toString" is not undefined (and can stringify like an entry: "{}").
 */
function absent(id: string): unknown {
  return ({} as Record<string, unknown>)[id];
}

/** editedToolIds by parsing both files whole: the definition the block comparison must agree with. */
function editedByParsing(committed: string, head: string): string[] | "all" {
  let before: Record<string, unknown>;
  try {
    before = (JSON.parse(head) as { tools?: Record<string, unknown> }).tools ?? {};
  } catch {
    return "all";
  }
  const after = (JSON.parse(committed) as { tools?: Record<string, unknown> }).tools ?? {};
  const ids = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...ids].filter((id) => JSON.stringify(before[id]) !== JSON.stringify(after[id])).sort();
}
