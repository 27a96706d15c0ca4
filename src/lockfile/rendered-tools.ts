// The "tools" section of lockfile text renderLockfile wrote, read in place. The caller knows the
// text is kiwi's rendering (a memo says a process checked exactly these bytes as such), so its
// shape is known without looking: blocks `    "<id>": {\n…\n    }` joined by ",\n", sorted, each
// id once, every line inside a block indented deeper than its braces, no raw newline inside a
// string. A block is then found by searching for its rendered key (or for its rendered "source"
// line), so a check that reads five entries of 1,000 never cuts the other 995: cutting them all
// costs ~1.5 ms in a fresh process, more than JSON.parse of the whole file. Pure.
import { renderString } from "./render.ts";
import { CLOSE, KEY_END, OPEN, TOOLS_KEY, decodeKey } from "./tool-blocks.ts";

/** Where a block's first line starts: a newline and the block's indent before a key. */
const NL_OPEN = `\n${OPEN}`;

/** The tools section of rendered text: its blocks, joined by ",\n", fill [start, end). */
export interface RenderedTools {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** The tools section of `text`, which the caller knows renderLockfile wrote; undefined when it has none of that shape. */
export function renderedTools(text: string): RenderedTools | undefined {
  const at = text.indexOf(TOOLS_KEY);
  if (at === -1) return undefined;
  const open = at + TOOLS_KEY.length;
  if (text.startsWith("{}", open)) return { text, start: open + 1, end: open + 1 };
  if (!text.startsWith(`{\n${OPEN}`, open)) return undefined;
  // The section's close is the first line at its indent: every line of a block sits deeper.
  const close = text.indexOf("\n  }", open);
  return close === -1 ? undefined : { text, start: open + 2, end: close };
}

/** The block that starts at `pos`: its id and its text; undefined when none does. */
export function renderedBlockAt(view: RenderedTools, pos: number): { id: string; block: string } | undefined {
  const { text } = view;
  if (pos < view.start || pos >= view.end || !text.startsWith(OPEN, pos)) return undefined;
  const keyEnd = text.indexOf(KEY_END, pos + OPEN.length);
  const close = keyEnd === -1 ? -1 : text.indexOf(CLOSE, keyEnd + KEY_END.length - 1);
  if (close === -1 || close + CLOSE.length > view.end) return undefined;
  const id = decodeKey(text.slice(pos + OPEN.length - 1, keyEnd + 1));
  return id === undefined ? undefined : { id, block: text.slice(pos, close + CLOSE.length) };
}

/** Where the last block starting at or before `pos` starts; -1 when none does. */
export function renderedBlockBefore(view: RenderedTools, pos: number): number {
  if (view.start === view.end || pos < view.start) return -1;
  const at = view.text.lastIndexOf(NL_OPEN, Math.min(pos, view.end) - 1) + 1;
  return at < view.start ? -1 : at;
}

/** Where the block of `id` starts, or -1: only its first line holds its rendered key at that indent. */
export function findRenderedBlock(view: RenderedTools, id: string): number {
  if (view.start === view.end) return -1;
  const at = view.text.indexOf(`${NL_OPEN.slice(0, -1)}${renderString(id)}: {\n`, view.start - 1);
  return at === -1 || at >= view.end ? -1 : at + 1;
}

/**
 * Ids of the blocks any of `paths` touches (locked-tools.ts touches: whose "source" is the path,
 * or a directory manifest in a folder above it), in file order. Found by their rendered "source"
 * line, which nothing else in the section has, in one pass over the section: each source line's
 * value is looked up among the rendered sources the paths can touch (the path itself, and
 * tool.yaml, tool.yml and tool.json in each folder above it). A search per path and per folder
 * above it was six passes over a 2 MB lockfile for a commit of one tool (~1.4 ms).
 */
export function renderedIdsTouchedByAny(view: RenderedTools, paths: readonly string[]): string[] {
  const wanted = new Set<string>();
  for (const path of paths) {
    wanted.add(renderString(path));
    const folders: string[] = [];
    for (let at = path.indexOf("/"); at !== -1; at = path.indexOf("/", at + 1)) folders.push(`${path.slice(0, at)}/`);
    // A source with no folder at all is in no folder but "" (sourceDir ""), which only a path starting with "/" is under.
    if (path.startsWith("/")) folders.push("");
    for (const folder of folders) {
      const open = renderString(`${folder}tool.`).slice(0, -1);
      for (const end of MANIFEST_ENDS) wanted.add(`${open}${end}`);
    }
  }
  // The lengths of the wanted values: a source of another length is passed over without cutting
  // it out of the text and looking it up (this runs once per tool of the lockfile, in the interpreter).
  let longest = 0;
  for (const w of wanted) longest = Math.max(longest, w.length);
  const fits = new Uint8Array(longest + 1);
  for (const w of wanted) fits[w.length] = 1;
  const { text } = view;
  const ids: string[] = [];
  for (let at = text.indexOf(SOURCE_LINE, view.start); at !== -1 && at < view.end; at = text.indexOf(SOURCE_LINE, at + 1)) {
    // A rendered string holds no raw newline: the value runs to the line's end, less its comma.
    const from = at + SOURCE_LINE.length;
    const lineEnd = text.indexOf("\n", from);
    if (lineEnd === -1 || text.charCodeAt(lineEnd - 1) !== COMMA) continue;
    const length = lineEnd - 1 - from;
    if (length > longest || fits[length] !== 1 || !wanted.has(text.slice(from, lineEnd - 1))) continue;
    const block = renderedBlockAt(view, renderedBlockBefore(view, at));
    if (block && !ids.includes(block.id)) ids.push(block.id);
  }
  return ids;
}

const SOURCE_LINE = '\n      "source": ';
const COMMA = 0x2c;
/** How a directory manifest's rendered source ends after `"<folder>/tool.`. */
const MANIFEST_ENDS = ['yaml"', 'yml"', 'json"'];

/** Every block's id, in file order (one pass over the section: only when all are needed). */
export function renderedIds(view: RenderedTools): string[] {
  const ids: string[] = [];
  for (let pos = view.start; pos < view.end; ) {
    const block = renderedBlockAt(view, pos);
    if (!block) break;
    ids.push(block.id);
    pos += block.block.length + 2;
  }
  return ids;
}
