// The fast path for the common case: the lockfile on disk is byte for byte what kiwi would write
// for the tree now. Then it is valid by construction (kiwi rendered it from validated data), so
// the slow lossless parse, the schema check and the hand-edit comparison can all be skipped. Pure.
import { type CanonicalValue, isRecord } from "../integrity/value.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";
import { type Lockfile, type McpPin, type RemoteTool, type ToolDependencies } from "../schema/lockfile.ts";
import { LOCKFILE_VERSION } from "../schema/vocabulary.ts";
import { type HashedTool, buildLockfile } from "./build.ts";
import { checkLockfileValue, peekLockfile } from "./parse.ts";
import { renderLockfile } from "./render.ts";

const PINS_KEY = '\n  "mcp_servers": ';

/**
 * The lockfile `text` holds when it is exactly what `tree` renders to (its pins included), else
 * undefined and the caller takes the slow path. Equality of bytes also proves that the quick
 * lossy parse lost nothing: a float such as 3.0 read as 3 would render differently.
 */
export function matchUnchangedLockfile(text: string | undefined, tree: readonly HashedTool[]): { lock: Lockfile; rendered: string } | undefined {
  const view = renderWithQuickPins(text, tree);
  if (!view || view.rendered !== text) return undefined;
  return confirmUnchanged(view);
}

/**
 * The lockfile the tree renders to with the pins of a quick (lossy) look at `text`; undefined
 * when the quick look is not usable (no file, not JSON, another version, odd pins).
 */
export function renderWithQuickPins(text: string | undefined, tree: readonly HashedTool[]): { lock: Lockfile; rendered: string; quick: unknown } | undefined {
  if (text === undefined) return undefined;
  const peek = peekLockfile(text);
  if (!peek || peek.version !== LOCKFILE_VERSION || !isRecord(peek.pins)) return undefined;
  let lock: Lockfile;
  try {
    // Remote records are plain strings; a quick look that renders back to the same bytes lost nothing.
    const remote = isRecord(peek.value) && isRecord(peek.value.remote) ? (peek.value.remote as Record<string, RemoteTool>) : undefined;
    // Dependencies are what npm resolved, not derived from the tree: kept as the file has them.
    const dependencies = isRecord(peek.value) && isRecord(peek.value.dependencies) ? (peek.value.dependencies as Record<string, ToolDependencies>) : undefined;
    lock = buildLockfile(tree, peek.pins as Record<string, McpPin>, remote, dependencies);
  } catch {
    return undefined;
  }
  return { lock, rendered: renderLockfile(lock), quick: peek.value };
}

/** Completes a quick rendering equal to the file: pins are checked and read losslessly. */
export function confirmUnchanged(view: { lock: Lockfile; rendered: string }): { lock: Lockfile; rendered: string } {
  const { lock, rendered: text } = view;
  // Remote records are data kiwi did not derive from the tree either: check them (fail closed).
  if (lock.remote || lock.dependencies) {
    const value: Record<string, CanonicalValue> = { lockfileVersion: LOCKFILE_VERSION, tools: lock.tools as never, mcp_servers: {} };
    if (lock.remote) value.remote = lock.remote as never;
    if (lock.dependencies) value.dependencies = lock.dependencies as never;
    checkLockfileValue(value);
  }
  if (Object.keys(lock.mcp_servers).length === 0) return view;
  // Pins are data kiwi did not derive from the tree: check them (fail closed) from their own text.
  const at = text.lastIndexOf(PINS_KEY);
  const pinsText = text.slice(at + PINS_KEY.length, text.length - "\n}\n".length);
  const pins = parseJsonLossless(pinsText, { positions: false }).value as CanonicalValue;
  const checked = checkLockfileValue({ lockfileVersion: LOCKFILE_VERSION, tools: {}, mcp_servers: pins });
  return { lock: { ...lock, mcp_servers: checked.mcp_servers }, rendered: text };
}
