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
        if (!text.startsWith(OPEN, pos)) return undefined;
        const keyEnd = text.indexOf(KEY_END, pos + OPEN.length);
        if (keyEnd === -1) return undefined;
        const decoded = decodeKey(text.slice(pos + OPEN.length - 1, keyEnd + 1));
        if (decoded === undefined) return undefined;
        id = decoded;
        // The rendered shape ends at the block's first "\n    }" (its lines are indented deeper), as a cut does.
        RENDERED_BLOCK.lastIndex = pos;
        if (RENDERED_BLOCK.test(text)) {
          block = text.slice(pos, RENDERED_BLOCK.lastIndex);
          rendered.add(id);
        } else {
          const close = text.indexOf(CLOSE, keyEnd + KEY_END.length - 1);
          if (close === -1) return undefined;
          block = text.slice(pos, close + CLOSE.length);
        }
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
export function cutRenderedToolBlocks(text: string): ToolBlocks | undefined {
  const at = text.indexOf(TOOLS_KEY);
  if (at === -1) return undefined;
  const start = at + TOOLS_KEY.length;
  const blocks = new Map<string, string>();
  if (text.startsWith("{}", start)) return { blocks, rendered: new Set() };
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
    if (text.startsWith(",\n", end)) pos = end + 2;
    else if (text.startsWith("\n  }", end)) break;
    else return undefined;
  }
  return { blocks, rendered: new Set(blocks.keys()) };
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
export function editedToolIds(committed: string, head: string | undefined, cut?: ToolBlocks): string[] | "all" {
  if (head === undefined) return "all";
  const after = cut ?? splitToolBlocks(committed);
  const before = after === undefined ? undefined : splitToolBlocks(head, after);
  const edited = after !== undefined && before !== undefined ? editedBlocks(after, before) : undefined;
  return edited ?? editedByParsing(committed, head);
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
