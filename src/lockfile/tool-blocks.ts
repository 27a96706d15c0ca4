// Which tool entries differ between two lockfile texts (HEAD's and the one being committed), without
// JSON.parsing two ~500 KB files when kiwi wrote both: the "tools" section is cut into one text
// block per id, equal blocks are equal entries and only the blocks that differ are parsed. The
// answer is always the one parsing both files whole gives; any text this cannot cut, or whose
// blocks it cannot vouch for, is parsed whole. Pure.
import { FILE_KEYS, TOOL_KEYS } from "./render.ts";

/** Where the tools section starts in text renderLockfile wrote (a raw newline is never inside a JSON string). */
const TOOLS_KEY = '\n  "tools": ';
const OPEN = '    "';
const KEY_END = '": {\n';
const CLOSE = "\n    }";

/** The "tools" section of a lockfile, cut into one block of text per tool. */
export interface ToolBlocks {
  /** Each tool's block (`    "<id>": {\n…\n    }`), by id, in file order. */
  blocks: Map<string, string>;
  /** Ids whose block has the shape renderTool writes, which makes it one whole JSON member. */
  rendered: Set<string>;
}

/** The cut of text kiwi rendered (cutRenderedToolBlocks): every block rendered, with its place. */
export interface RenderedCut extends ToolBlocks {
  /** The ids in file order. */
  ids: string[];
  /** Where each block starts in the text, in file order. */
  starts: number[];
}

/**
 * The "tools" section of lockfile `text` cut into blocks as renderLockfile writes them, or
 * undefined unless such blocks, joined by ",\n", tile the section exactly, no id appears twice, and
 * that section is the value JSON.parse(text).tools reads. A block ends at the first "\n    }" after
 * its key, so a hand-edited one may not be a whole JSON member: only `rendered` ones are known to
 * be. `like` (another text's blocks, e.g. the lockfile before a relock) is a hint: where this text
 * repeats one of its blocks in order, the block is taken by one comparison and shares its string.
 */
export function splitToolBlocks(text: string, like?: ToolBlocks): ToolBlocks | undefined {
  const at = text.indexOf(TOOLS_KEY);
  if (at === -1) return undefined;
  const start = at + TOOLS_KEY.length;
  const blocks = new Map<string, string>();
  const rendered = new Set<string>();
  const hints = like ? [...like.blocks] : [];
  let next = 0; // the hint expected at `pos`
  let end: number;
  if (text.startsWith("{}", start)) end = start + 2;
  else {
    if (!text.startsWith("{\n", start)) return undefined;
    let pos = start + 2;
    for (;;) {
      let id: string;
      let block: string;
      const hint = hints[next];
      if (hint !== undefined && text.startsWith(hint[1], pos)) {
        [id, block] = hint;
        if (like!.rendered.has(id)) rendered.add(id);
        next++;
      } else {
        const read = readBlockAt(text, pos);
        if (read === undefined) return undefined;
        ({ id, block } = read);
        if (read.rendered) rendered.add(id);
        if (hint !== undefined) next = hint[0] === id ? next + 1 : hintAfter(hints, id, next);
      }
      if (blocks.has(id)) return undefined;
      blocks.set(id, block);
      const blockEnd = pos + block.length;
      if (text.startsWith(",\n", blockEnd)) pos = blockEnd + 2;
      else if (text.startsWith("\n  }", blockEnd)) {
        end = blockEnd + 4;
        break;
      } else return undefined;
    }
  }
  // The rest of the file must parse with that section as its top-level "tools": two different
  // stand-ins must both come back there (a later duplicate "tools" key would win over either).
  const before = text.slice(0, start);
  const after = text.slice(end);
  return readsAsTools(before, after, 0) && readsAsTools(before, after, 1) ? { blocks, rendered } : undefined;
}

/**
 * The block that opens at `pos`, cut as splitToolBlocks cuts it, and whether it has the rendered
 * shape (only when `shape` asks: the match costs ~1 ms the first time, to compile the pattern);
 * undefined when no block opens there.
 */
function readBlockAt(text: string, pos: number, shape = true): { id: string; block: string; rendered: boolean } | undefined {
  if (!text.startsWith(OPEN, pos)) return undefined;
  const keyEnd = text.indexOf(KEY_END, pos + OPEN.length);
  if (keyEnd === -1) return undefined;
  const id = decodeKey(text.slice(pos + OPEN.length - 1, keyEnd + 1));
  if (id === undefined) return undefined;
  // The rendered shape ends at the block's first "\n    }" (its lines are indented deeper), as a cut does.
  if (shape) {
    RENDERED_BLOCK.lastIndex = pos;
    if (RENDERED_BLOCK.test(text)) return { id, block: text.slice(pos, RENDERED_BLOCK.lastIndex), rendered: true };
  }
  const close = text.indexOf(CLOSE, keyEnd + KEY_END.length - 1);
  return close === -1 ? undefined : { id, block: text.slice(pos, close + CLOSE.length), rendered: false };
}

/**
 * Where the hints resume after a block of `id` that did not match one: after `id`'s own hint, if
 * any (a search, so a text whose blocks were reordered by hand costs quadratic time, not a wrong cut).
 */
function hintAfter(hints: readonly [string, string][], id: string, from: number): number {
  for (let i = from; i < hints.length; i++) if (hints[i]![0] === id) return i + 1;
  return from;
}

/**
 * splitToolBlocks for text renderLockfile wrote, which the caller knows (a memo of this text says a
 * process checked it as kiwi's own rendering, or render(parse(text)) gave it back): the blocks are
 * cut where each entry opens, without matching each block's shape, and every block is rendered.
 * The same cut splitToolBlocks gives such text, for a tenth of the time; undefined when the text
 * does not cut the way rendered text does (then it was not rendered, and the caller parses it).
 */
export function cutRenderedToolBlocks(text: string): RenderedCut | undefined {
  const at = text.indexOf(TOOLS_KEY);
  if (at === -1) return undefined;
  const start = at + TOOLS_KEY.length;
  const blocks = new Map<string, string>();
  const ids: string[] = [];
  const starts: number[] = [];
  if (text.startsWith("{}", start)) return { blocks, rendered: new Set(), ids, starts };
  if (!text.startsWith("{\n", start)) return undefined;
  let pos = start + 2;
  for (;;) {
    if (!text.startsWith(OPEN, pos)) return undefined;
    const keyEnd = text.indexOf(KEY_END, pos + OPEN.length);
    if (keyEnd === -1) return undefined;
    const id = decodeKey(text.slice(pos + OPEN.length - 1, keyEnd + 1));
    // A rendered entry's lines sit deeper than its braces, and a raw newline is never inside a JSON string.
    const close = text.indexOf(CLOSE, keyEnd + KEY_END.length - 1);
    if (id === undefined || close === -1 || blocks.has(id)) return undefined;
    const end = close + CLOSE.length;
    blocks.set(id, text.slice(pos, end));
    ids.push(id);
    starts.push(pos);
    if (text.startsWith(",\n", end)) pos = end + 2;
    else if (text.startsWith("\n  }", end)) break;
    else return undefined;
  }
  return { blocks, rendered: new Set(ids), ids, starts };
}

function readsAsTools(before: string, after: string, standIn: number): boolean {
  try {
    return (JSON.parse(`${before}${standIn}${after}`) as { tools?: unknown } | null)?.tools === standIn;
  } catch {
    return false;
  }
}

/** Characters that make a key's text differ from the key (escapes) or not a JSON string at all. */
const NOT_PLAIN = /["\\\u0000-\u001f]/;

/** A quoted JSON key as JSON.parse reads it; undefined when it is not one string. */
function decodeKey(quoted: string): string | undefined {
  const inner = quoted.slice(1, -1);
  // Most ids are plain text, which reads as itself; only escapes (or garbage) need JSON.parse.
  if (!NOT_PLAIN.test(inner)) return inner;
  try {
    const id: unknown = JSON.parse(quoted);
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON string, as an unrolled loop (plain runs between escapes), which matches faster than one alternation per character. */
const STRING = String.raw`"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"`;
const SCALAR = `(?:${STRING}|null|true|false)`;
const FILE = `        \\{ ${FILE_KEYS.map((k) => `"${k}": ${SCALAR}`).join(", ")} \\}`;
const FILES = `(?:\\[\\]|\\[\\n${FILE}(?:,\\n${FILE})*\\n      \\])`;
/**
 * One tool block in the shape renderTool writes (keys in order, flat values, one file per line),
 * matched where lastIndex points: whatever it holds, such text is one whole JSON member, so two
 * equal such blocks hold equal entries without parsing either.
 */
const RENDERED_BLOCK = new RegExp(`    ${STRING}: \\{\\n${TOOL_KEYS.map((k) => `      "${k}": ${k === "files" ? FILES : SCALAR}`).join(",\\n")}\\n    \\}`, "y");

/** Marks a block that is not one JSON member named by its id. */
export const NOT_AN_ENTRY = Symbol("not an entry");

/** The value of the one member a block holds, or NOT_AN_ENTRY when the block is anything else. */
export function entryOfBlock(block: string, id: string): unknown {
  let member: Record<string, unknown>;
  try {
    member = JSON.parse(`{${block}}`) as Record<string, unknown>;
  } catch {
    return NOT_AN_ENTRY;
  }
  const keys = Object.keys(member);
  return keys.length === 1 && keys[0] === id ? member[id] : NOT_AN_ENTRY;
}

/**
 * Ids whose tool entry differs between `head` (HEAD's lockfile text) and `committed` (the text
 * being committed), compared as JSON.stringify of what JSON.parse reads; "all" without a HEAD copy
 * or when HEAD's copy is not JSON. Sorted. `committed` is JSON (the caller parsed it already);
 * `cut`, when given, is its cut (splitToolBlocks' or cutRenderedToolBlocks').
 */
export function editedToolIds(committed: string, head: string | undefined, cut?: ToolBlocks | RenderedCut): string[] | "all" {
  if (head === undefined) return "all";
  const quick = cut !== undefined && "starts" in cut ? editedInStretch(committed, cut, head) : undefined;
  if (quick !== undefined) return quick;
  const after = cut ?? splitToolBlocks(committed);
  const before = after === undefined ? undefined : splitToolBlocks(head, after);
  const edited = after !== undefined && before !== undefined ? editedBlocks(after, before) : undefined;
  return edited ?? editedByParsing(committed, head);
}

/**
 * editedToolIds where the committed text is kiwi's rendering (`cut`) and HEAD's differs from it in
 * one stretch, as a relock rewrites a few entries: the texts are compared from both ends, and only
 * the committed blocks that reach into the differing stretch, and what HEAD holds in their place,
 * are cut and compared. HEAD's text is then the committed text's blocks before and after that
 * stretch (the same bytes, so the same members in the same "tools"), with its own blocks between,
 * which must tile it as blocks joined by ",\n" and name no id kept outside it: exactly what
 * splitToolBlocks would cut of HEAD. Undefined whenever that does not hold (an edit reaching past
 * the tools section, a block removed or added at the stretch's edge, a HEAD block that is not one
 * whole member where it counts): the caller then cuts HEAD whole.
 */
export function editedInStretch(committed: string, cut: RenderedCut, head: string): string[] | undefined {
  const { ids, starts, blocks } = cut;
  const n = ids.length;
  if (n === 0) return undefined;
  const ends = (k: number) => starts[k]! + blocks.get(ids[k]!)!.length;
  const same = commonPrefix(committed, head);
  if (same === committed.length && same === head.length) return [];
  const tail = commonSuffix(committed, head, Math.min(committed.length, head.length) - same);
  const differsTo = committed.length - tail; // the committed text differs in [same, differsTo)
  // The first block not wholly in the common prefix, and the last not wholly in the common suffix.
  const first = firstIndex(n, (k) => ends(k) > same);
  const last = firstIndex(n, (k) => starts[k]! >= differsTo) - 1;
  if (first === n || last < 0) return undefined;
  // The stretch starts at a block (or the separator before it) the prefix reaches, and ends at a block (or the separator after it) the suffix reaches.
  const lead = starts[first]! > same;
  const trail = ends(last) < differsTo;
  if ((lead && first === 0) || (trail && last === n - 1)) return undefined;
  const from = lead ? ends(first - 1) : starts[first]!;
  const to = trail ? starts[last + 1]! : ends(last);
  const headTo = to - (committed.length - head.length);
  if (headTo < from) return undefined;
  // HEAD's blocks in the stretch, joined by ",\n", framed by the separators the committed stretch has.
  // A HEAD block counts only by its text (equal to a rendered one) or by parsing it: its shape is never asked.
  const mine = new Map<string, { block: string }>();
  let pos = from;
  if (lead) {
    if (!head.startsWith(",\n", pos)) return undefined;
    pos += 2;
  }
  const stop = trail ? headTo - 2 : headTo;
  if (trail && !head.startsWith(",\n", stop)) return undefined;
  for (;;) {
    const read = readBlockAt(head, pos, false);
    if (read === undefined || mine.has(read.id)) return undefined;
    mine.set(read.id, read);
    pos += read.block.length;
    if (pos === stop) break;
    if (pos > stop || !head.startsWith(",\n", pos)) return undefined;
    pos += 2;
  }
  const inside = new Set(ids.slice(first, last + 1));
  const edited: string[] = [];
  for (const [id, read] of mine) {
    // A HEAD id also kept outside the stretch would be a second member of that name.
    if (blocks.has(id) && !inside.has(id)) return undefined;
    if (inside.has(id) && blocks.get(id) === read.block) continue; // the committed block is rendered: one whole member
    const was = entryOfBlock(read.block, id);
    if (was === NOT_AN_ENTRY) return undefined;
    const now = inside.has(id) ? entryOfBlock(blocks.get(id)!, id) : absent(id);
    if (JSON.stringify(now) !== JSON.stringify(was)) edited.push(id);
  }
  for (const id of inside) {
    if (mine.has(id)) continue;
    if (JSON.stringify(entryOfBlock(blocks.get(id)!, id)) !== JSON.stringify(absent(id))) edited.push(id);
  }
  return edited.sort();
}

/** The first k in [0, n) for which `past(k)` holds (it holds from some k on), or n. */
function firstIndex(n: number, past: (k: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (past(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
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
