// What every validation layer receives: the whole tree (chain rules see everything), the options,
// and small shared helpers. Pure.
import { type Tool, isRemoteTool } from "../manifest/model.ts";
import type { ToolIndex } from "../resolve/chain.ts";
import type { SchemaError } from "./json-schema.ts";
import { escapePointer } from "../integrity/canonical.ts";

export interface LayerContext {
  /** Every tool in the tree, built-ins included (project tools first). */
  index: ToolIndex;
  strict: boolean;
  /** Project-relative paths discovery reported as symbolic links leaving their tool. */
  escapedPaths: ReadonlySet<string>;
  /** child_schemas verdicts remembered across runs (injected; none means every pair is compiled and judged). */
  childSchemaMemo?: ChildSchemaMemo;
  /** What tool.lock.json records of remote tools, when the caller read it (isPublished). */
  remoteRecords?: RemoteRecords;
  /** Remote tools tool.lock.json records that this checkout has not installed: an executor missing for that reason says so. */
  notInstalled?: ReadonlySet<string>;
}

/**
 * The tools tool.lock.json records as remote (its `remote` section), and whether it could be read:
 * `kiwi add` and `kiwi install` place in REMOTE_TOOLS_DIR only tools it records.
 */
export interface RemoteRecords {
  ids: ReadonlySet<string>;
  lockfile: "read" | "absent" | "unreadable";
}

/**
 * Whether a tool's files are its registry publisher's, so that a credential in them is said to its
 * consumer as theirs to fix (a warning): it is in REMOTE_TOOLS_DIR and, when the caller read the
 * lockfile, recorded there. A tool put in that folder by hand, or committed into it, is the
 * project's own (validate/check-project.ts says so: security/remote-unlocked).
 */
export function isPublished(tool: Pick<Tool, "id" | "root">, records: RemoteRecords | undefined): boolean {
  return isRemoteTool(tool) && (records === undefined || records.ids.has(tool.id));
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

/**
 * Verdicts of child_schemas remembered across runs, so a check whose parent/child pairs were all
 * judged before never loads ajv. Keys are digests of `salt` (kiwi's version and the memo format),
 * whether the schema is kiwi's own, the schema's exact text and, for a pair, the child's link
 * document; the value is what ajv returned. An entry's own key holds [] once its schema compiled.
 */
export interface ChildSchemaMemo {
  readonly salt: string;
  /** Remembered errors for a key (validated: anything malformed reads as absent). */
  get(key: string): readonly SchemaError[] | undefined;
  set(key: string, errors: readonly SchemaError[]): void;
}
