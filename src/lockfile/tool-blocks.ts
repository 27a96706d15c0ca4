// A lockfile's "tools" section cut into one text block per id, as renderLockfile writes it, so
// that entries can be compared (edited-tools.ts) or read one at a time (locked-tools.ts) without
// JSON.parsing a ~500 KB file: a block in the rendered shape is one whole JSON member, so equal
// blocks are equal entries and a block parsed alone gives what parsing the file gives. Any text
// this cannot cut, or whose blocks it cannot vouch for, is left to the caller to parse whole. Pure.
import { FILE_KEYS, TOOL_KEYS } from "./render.ts";

/** Where the tools section starts in text renderLockfile wrote (a raw newline is never inside a JSON string). */
export const TOOLS_KEY = '\n  "tools": ';
export const OPEN = '    "';
export const KEY_END = '": {\n';
export const CLOSE = "\n    }";

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
export function readBlockAt(text: string, pos: number, shape = true): { id: string; block: string; rendered: boolean } | undefined {
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
export function decodeKey(quoted: string): string | undefined {
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
