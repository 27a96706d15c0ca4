// tool.lock.json text -> Lockfile, failing closed: a truncated or malformed file, a lockfile from a
// newer kiwi, a digest that is empty, malformed or of another algorithm, an unsafe path or a
// dangling executor are all E_LOCK_INVALID, never skipped. Pure.
import { KiwiError } from "../errors.ts";
import { BUILTIN_IDS } from "../manifest/builtins.ts";
import { parseDigest } from "../integrity/digest.ts";
import { type CanonicalValue, isMapping, toPlain } from "../integrity/value.ts";
import { computeLineStarts, lineColumn, parseJsonLossless } from "../integrity/json-lossless.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";
import { toolPathProblem } from "../integrity/tool-path.ts";
import type { Lockfile, McpPin } from "../schema/lockfile.ts";
import { LOCKFILE_VERSION } from "../schema/vocabulary.ts";
import { renderLockfile } from "./render.ts";
import { LOCKFILE_NAME } from "./name.ts";

/** The lockfile's name at the project root (name.ts holds it for code that needs nothing else). */
export { LOCKFILE_NAME };

const RESTORE_HINT = `restore ${LOCKFILE_NAME} from version control, or delete it and run "kiwi lock"`;
const HEX = /^[0-9a-f]{64}$/;

/**
 * What kiwi lock, which rewrites every tool entry from the tree, may read past: an entry naming an
 * executor version the lockfile does not lock (what git makes of two branches, one upgrading a
 * runtime, one adding a tool on it) is recorded in `danglingExecutors` instead of refused.
 */
export interface RewriteOptions {
  danglingExecutors: string[];
}

/**
 * Parses lockfile text; `file` names it in messages (project-relative). Throws E_LOCK_INVALID.
 * `quick` may pass JSON.parse(text) when the caller already has it.
 */
export function parseLockfile(text: string, file: string = LOCKFILE_NAME, quick?: unknown, rewrite?: RewriteOptions): Lockfile {
  const invalid = (message: string, hint = RESTORE_HINT, details?: Record<string, unknown>) =>
    new KiwiError("E_LOCK_INVALID", `${file}: ${message}`, { hint, details: { file, ...details } });
  if (text.trim() === "") throw invalid("the file is empty");
  const fast = parseRendered(text, file, quick, rewrite);
  if (fast) return fast;
  let value: CanonicalValue;
  try {
    const parsed = parseJsonLossless(text, { positions: false });
    const dup = parsed.warnings[0];
    if (dup) {
      const at = lineColumn(computeLineStarts(text), dup.offset);
      throw invalid(`${dup.message} (line ${at.line}, column ${at.column}); a lockfile kiwi wrote never has one`);
    }
    value = parsed.value;
  } catch (error) {
    if (!(error instanceof ParseProblem) || error.offset === undefined) throw error;
    const conflict = conflictMarker(text);
    if (conflict) throw invalid(`unresolved merge conflict (line ${conflict.line}: "${conflict.marker}")`, `${conflictHint(LOCKFILE_NAME)}, then run "kiwi lock"`, { conflict: true });
    const at = lineColumn(computeLineStarts(text), error.offset);
    // kiwi always ends the file with "}\n"; a parse error in a file that does not is a cut-off write or copy.
    const truncated = !text.trimEnd().endsWith("}");
    throw invalid(`${truncated ? "the file is truncated" : "invalid JSON"}: ${error.message} (line ${at.line}, column ${at.column})`);
  }
  return checkLockfileValue(value, file, false, rewrite);
}

/**
 * The way out of a merge conflict in the lockfile, up to the lock that follows: take either side
 * whole, since kiwi lock rewrites every tool entry from the merged tree (MCP pins and registry
 * records come from the side kept). By commit, not --ours/--theirs: those do nothing once the
 * conflicted file was added. `where` names the lockfile from where the user stands.
 */
export function conflictHint(where: string): string {
  return `take one side of the merge whole ("git checkout HEAD -- ${where}", or MERGE_HEAD for the other; kiwi lock rewrites every tool entry from the tree)`;
}

/** The first line git's merge left as a conflict marker (<<<<<<<, |||||||, =======, >>>>>>>). */
function conflictMarker(text: string): { line: number; marker: string } | undefined {
  const found = /^(?:<{7}|\|{7}|={7}|>{7})(?![<|=>])[^\r\n]*/m.exec(text);
  if (!found) return undefined;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < found.index; i = text.indexOf("\n", i + 1)) line++;
  return { line, marker: found[0].slice(0, 60) };
}

/** Checks a parsed (lossless) lockfile value; the checks of parseLockfile after JSON syntax. */
export function checkLockfileValue(value: CanonicalValue, file: string = LOCKFILE_NAME, plainAlready = false, rewrite?: RewriteOptions): Lockfile {
  const invalid = (message: string, hint = RESTORE_HINT, details?: Record<string, unknown>) =>
    new KiwiError("E_LOCK_INVALID", `${file}: ${message}`, { hint, details: { file, ...details } });
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid("the top level is not a JSON object");
  const record = value as Record<string, CanonicalValue>;
  assertVersion(record.lockfileVersion, invalid);
  assertDigests(record, file);
  // A JSON.parse result has no Float or bigint, so it is its own plain view.
  const plain = (plainAlready ? value : toPlain(value)) as Lockfile;
  // Interpreted, not compiled: one lockfile is checked per process, and compiling the schema costs
  // ~5 ms on every kiwi exec against ~1 ms to check it directly. TypeBox and the schema load only
  // here: text kiwi rendered, or remembered as checked, never comes this way (~0.7 ms of start-up).
  const { Value } = require("@sinclair/typebox/value") as typeof import("@sinclair/typebox/value");
  const { LockfileSchema } = require("../schema/lockfile.ts") as typeof import("../schema/lockfile.ts");
  if (!Value.Check(LockfileSchema, plain)) {
    const first = Value.Errors(LockfileSchema, plain).First()!;
    throw invalid(`${first.path || "/"}: ${first.message}`, RESTORE_HINT, { pointer: first.path });
  }
  // Pins keep their lossless values (integer/float identity) so rewriting them changes nothing.
  const lock = lockfileOf(plain, record.mcp_servers as Record<string, CanonicalValue>);
  assertSemantics(lock, invalid, rewrite);
  return lock;
}

function lockfileOf(plain: Lockfile, pins: Record<string, CanonicalValue>): Lockfile {
  return {
    lockfileVersion: plain.lockfileVersion,
    tools: plain.tools,
    ...(plain.remote ? { remote: plain.remote } : {}),
    ...(plain.dependencies ? { dependencies: plain.dependencies } : {}),
    mcp_servers: pins as unknown as Record<string, McpPin>,
  };
}

/**
 * Lockfile text kiwi wrote itself (render(JSON.parse(text)) === text), checked in full, or
 * undefined for any other text. Such text holds no value JSON.parse loses, so once one process has
 * checked it, `lockfileFromCheckedText` can rebuild the same Lockfile from the same bytes.
 */
export function parseRenderedLockfile(text: string, file: string = LOCKFILE_NAME): Lockfile | undefined {
  return text.trim() === "" ? undefined : parseRendered(text, file);
}

/** The Lockfile of text parseRenderedLockfile accepted before (the caller keys that fact by the bytes). */
export function lockfileFromCheckedText(text: string): Lockfile {
  return lockfileFromCheckedValue(JSON.parse(text));
}

/** The same from the JSON.parse value of such text (a quick look the caller already took). */
export function lockfileFromCheckedValue(value: unknown): Lockfile {
  const plain = value as Lockfile;
  return lockfileOf(plain, plain.mcp_servers as unknown as Record<string, CanonicalValue>);
}

/**
 * The fast path for a lockfile kiwi wrote: JSON.parse, and if rendering the result gives back the
 * exact text, nothing was lost (no duplicate key vanished, no 3.0 became 3), so the lossless
 * parser is not needed; the value still goes through every check.
 */
function parseRendered(text: string, file: string, quick?: unknown, rewrite?: RewriteOptions): Lockfile | undefined {
  let value: unknown;
  try {
    value = quick ?? JSON.parse(text);
    if (renderLockfile(value as Lockfile) !== text) return undefined;
  } catch {
    return undefined;
  }
  return checkLockfileValue(value as CanonicalValue, file, true, rewrite);
}

/** A quick, lossy look (JSON.parse) at lockfile text, for the unchanged-lockfile fast path. */
export function peekLockfile(text: string): { value: unknown; version: unknown; pins: unknown } | undefined {
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    return v && typeof v === "object" && !Array.isArray(v) ? { value: v, version: v.lockfileVersion, pins: v.mcp_servers } : undefined;
  } catch {
    return undefined;
  }
}

function assertVersion(version: CanonicalValue | undefined, invalid: (m: string, h?: string) => KiwiError): void {
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    if (typeof version === "bigint" && version > 0n) throw newer(String(version), invalid);
    throw invalid(`lockfileVersion is ${version === undefined ? "missing" : JSON.stringify(toPlain(version))}; expected a positive integer`);
  }
  if (version > LOCKFILE_VERSION) throw newer(String(version), invalid);
}

function newer(version: string, invalid: (m: string, h?: string) => KiwiError): KiwiError {
  return invalid(
    `written by a newer kiwi (lockfileVersion ${version}; this kiwi reads ${LOCKFILE_VERSION})`,
    "upgrade kiwi to read this lockfile; an older kiwi never rewrites a newer lockfile",
  );
}

/** Every digest goes through parseDigest first, so an unknown algorithm is named as such. */
function assertDigests(record: Record<string, CanonicalValue>, file: string): void {
  const tools = record.tools;
  if (isMapping(tools)) {
    for (const [id, entry] of Object.entries(tools)) {
      if (!isMapping(entry)) continue;
      parseDigest(entry.integrity, `${file}: tool "${id}" integrity`);
      parseDigest(entry.manifest_digest, `${file}: tool "${id}" manifest_digest`);
      if (!Array.isArray(entry.files)) continue;
      entry.files.forEach((f, i) => {
        if (!isMapping(f)) return;
        if (typeof f.sha256 !== "string" || !HEX.test(f.sha256)) {
          const shown = typeof f.sha256 === "string" ? (f.sha256 === "" ? "an empty string" : JSON.stringify(f.sha256.slice(0, 80))) : String(toPlain(f.sha256 ?? null));
          throw new KiwiError("E_LOCK_INVALID", `${file}: tool "${id}" file ${JSON.stringify(toPlain(f.path ?? `#${i}`))} sha256 is not 64 lowercase hex digits (got ${shown})`, {
            hint: 'kiwi only accepts a bare lowercase sha256 hex digest for a file; run "kiwi lock" to rewrite it',
            details: { file, tool: id },
          });
        }
      });
    }
  }
  const pins = record.mcp_servers;
  if (isMapping(pins)) {
    for (const [id, pin] of Object.entries(pins)) {
      if (!isMapping(pin)) continue;
      parseDigest(pin.interface_hash, `${file}: MCP server "${id}" interface_hash`);
      parseDigest(pin.full_hash, `${file}: MCP server "${id}" full_hash`);
    }
  }
}

function assertSemantics(lock: Lockfile, invalid: (m: string, h?: string, d?: Record<string, unknown>) => KiwiError, rewrite?: RewriteOptions): void {
  for (const [id, entry] of Object.entries(lock.remote ?? {})) {
    const tool = lock.tools[id];
    if (!tool) throw invalid(`remote tool "${id}" is not locked in tools`);
    // kiwi add refuses such an artifact: placed, it would take over every chain that ends in the built-in.
    if (BUILTIN_IDS.includes(id)) throw invalid(`remote tool "${id}" takes the id of kiwi's built-in ${id}, which a remote tool may not replace`, `delete remote.${id} and tools.${id} from the lockfile, remove .ai/tools/.remote/${id}/ and run "kiwi lock"`);
    if (tool.integrity !== entry.integrity) throw invalid(`remote tool "${id}" was added with integrity ${entry.integrity} but tools locks ${tool.integrity}`);
    // kiwi install places the manifest file by this path, as it places the tool's files.
    const problem = toolPathProblem(entry.manifest_file, "locked");
    if (problem) throw invalid(`remote tool "${id}" manifest_file ${JSON.stringify(entry.manifest_file)} ${problem}`);
  }
  for (const [id, deps] of Object.entries(lock.dependencies ?? {})) {
    if (!lock.tools[id]) throw invalid(`dependencies of "${id}" are recorded, but "${id}" is not locked in tools`);
    // Only a package inside another's tarball goes without an integrity: npm ci would fetch any other unchecked.
    for (const [path, entry] of Object.entries(deps.npm?.packages ?? {})) {
      if (entry.integrity === undefined && (entry as Record<string, unknown>).inBundle !== true) throw invalid(`the npm package ${path} of "${id}" has no integrity`);
    }
  }
  for (const [id, tool] of Object.entries(lock.tools)) {
    const seen = new Set<string>();
    for (const f of tool.files) {
      const problem = toolPathProblem(f.path, "locked");
      if (problem) throw invalid(`tool "${id}" file ${JSON.stringify(f.path)} ${problem}`);
      if (seen.has(f.path)) throw invalid(`tool "${id}" lists the file ${JSON.stringify(f.path)} twice`);
      seen.add(f.path);
    }
    if (tool.executor !== null) {
      const at = tool.executor.lastIndexOf("@");
      const target = lock.tools[tool.executor.slice(0, at)];
      if (!target || target.version !== tool.executor.slice(at + 1)) {
        const message = `tool "${id}" names the executor ${tool.executor}, which the lockfile does not lock`;
        if (!rewrite) throw invalid(message, `${LOCKFILE_NAME} was merged or edited badly: run "kiwi lock", which rewrites every tool entry from the tree`, { rewritable: true });
        rewrite.danglingExecutors.push(message);
      }
    }
  }
}

