// The only module that writes tool.lock.json: read (fail closed), write only when the bytes
// change, atomically and under a cross-process lock, and the typed API MCP pins go through.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeFileAtomicSynced } from "../cache/atomic-io.ts";
import { type Faults, NO_FAULTS } from "../cache/faults-io.ts";
import { tempOwner, tempTarget } from "../cache/cache-layout.ts";
import { removeDeadLeftovers } from "../cache/projects-io.ts";
import { KiwiError } from "../errors.ts";
import { renderCanonicalJson } from "../integrity/canonical.ts";
import { parseDigest } from "../integrity/digest.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import type { Lockfile, McpPin, NpmDependencies, PypiDependencies, ToolDependencies } from "../schema/lockfile.ts";
import { type LockOptions, withFileLock } from "./mutex-io.ts";
import { LOCKFILE_NAME, parseLockfile } from "./parse.ts";
import { renderLockfile } from "./render.ts";

/** Absolute path of a project's lockfile. */
export function lockfilePath(root: string): string {
  return join(root, LOCKFILE_NAME);
}

/** The lockfile as read: its value and exact text. */
export interface ReadLockfile {
  lock: Lockfile;
  text: string;
}

/** The lockfile's text, or undefined when there is none. */
export function readLockfileText(root: string): string | undefined {
  try {
    return readFileSync(lockfilePath(root), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Reads the project's lockfile; undefined when there is none. Throws E_LOCK_INVALID when it is bad. */
export function readLockfile(root: string): ReadLockfile | undefined {
  const text = readLockfileText(root);
  return text === undefined ? undefined : { lock: parseLockfile(text), text };
}

/** Reads the lockfile or fails with E_LOCK_MISSING. */
export function readLockfileOrFail(root: string): ReadLockfile {
  const read = readLockfile(root);
  if (!read) throw new KiwiError("E_LOCK_MISSING", `${LOCKFILE_NAME} does not exist in ${root}`, { hint: 'run "kiwi lock"' });
  return read;
}

/**
 * Writes the lockfile if its rendered bytes differ from `previous` (the text last read).
 * Call inside withProjectLock. Returns whether it wrote, and the text now on disk.
 */
export function writeLockfile(root: string, lock: Lockfile, previous: string | undefined, faults: Faults = NO_FAULTS): { written: boolean; text: string } {
  const text = renderLockfile(lock);
  if (text === previous) return { written: false, text };
  removeDeadTemps(root);
  try {
    writeFileAtomic(lockfilePath(root), text, { faults, writePoint: "lockfile-write", renamePoint: "lockfile-rename", fsync: true });
  } catch (error) {
    throw lockfileWriteError(root, error);
  }
  return { written: true, text };
}

/**
 * Writes lockfile bytes kiwi rendered (a full lock's rendering, an incremental relock's splice), same rules as writeLockfile;
 * the write starts now and the promise settles once the file is flushed and in place, so the
 * caller can do its own work meanwhile. Undefined when the bytes are already there.
 */
export function writeLockfileText(root: string, text: string, previous: string | undefined, faults: Faults = NO_FAULTS): Promise<void> | undefined {
  if (text === previous) return undefined;
  removeDeadTemps(root);
  return writeFileAtomicSynced(lockfilePath(root), text, { faults, writePoint: "lockfile-write", renamePoint: "lockfile-rename" }).catch((error) => {
    throw lockfileWriteError(root, error);
  });
}

/**
 * A lockfile write this process may not make (a read-only checkout) as E_IO naming the lockfile
 * and the project's permissions, not the cache's; other errors (a full disk) pass unchanged.
 */
function lockfileWriteError(root: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "EACCES" && code !== "EPERM" && code !== "EROFS") return error;
  return new KiwiError("E_IO", `cannot write ${lockfilePath(root)}: ${code} (the project folder is ${code === "EROFS" ? "on a read-only file system" : "not writable by this user"})`, {
    hint: `make ${root} writable to lock it; "kiwi install --frozen-lockfile" and "kiwi verify" only read ${LOCKFILE_NAME}`,
    cause: error,
    details: { file: lockfilePath(root), code },
  });
}

/** Runs `fn` holding the project's lockfile lock (tool.lock.json.lock next to it); `onWait` is told when another process holds it. */
export function withProjectLock<T>(root: string, fn: () => T | Promise<T>, onWait?: LockOptions["onWait"]): Promise<T> {
  return withFileLock(`${lockfilePath(root)}.lock`, { subject: LOCKFILE_NAME, onWait }, fn);
}

/**
 * Sets (or, with `undefined`, removes) the interface pin of an MCP server, keeping every other
 * byte of the lockfile. The server must be a locked tool; the lockfile must exist. With `firstUse`
 * (trust on first use), the pin is written only while the server has none: a pin another kiwi
 * wrote since the caller read the lockfile is kept, and the returned lockfile holds it.
 */
export async function writeMcpPin(root: string, serverId: string, pin: McpPin | undefined, faults: Faults = NO_FAULTS, options: { firstUse?: boolean } = {}): Promise<Lockfile> {
  if (pin) {
    parseDigest(pin.interface_hash, `MCP pin for "${serverId}" interface_hash`);
    parseDigest(pin.full_hash, `MCP pin for "${serverId}" full_hash`);
  }
  return withProjectLock(root, () => {
    const { lock, text } = readLockfileOrFail(root);
    if (!lock.tools[serverId]) {
      throw new KiwiError("E_LOCK_STALE", `MCP server "${serverId}" is not in ${LOCKFILE_NAME}`, { hint: 'run "kiwi lock" first' });
    }
    if (options.firstUse && Object.hasOwn(lock.mcp_servers, serverId)) return lock;
    const pins = { ...lock.mcp_servers };
    if (pin) pins[serverId] = pin;
    else delete pins[serverId];
    const next: Lockfile = { ...lock, mcp_servers: pins };
    writeLockfile(root, next, text, faults);
    return next;
  });
}

/**
 * Records the installed tree digests of each tool's packages (kiwi install), keeping every other
 * byte of the lockfile. Only tools whose locked packages are still the ones installed (`installed`:
 * the entries the install read) are touched: a kiwi lock that ran meanwhile and resolved them anew
 * keeps its entry without a tree, rather than one naming another resolution's files.
 */
export async function writeDependencyTrees(root: string, trees: Record<string, { npm?: string; pypi?: string }>, installed: Readonly<Record<string, ToolDependencies>>): Promise<boolean> {
  const sameResolution = (a: NpmDependencies | PypiDependencies, b: NpmDependencies | PypiDependencies | undefined) => {
    const plain = ({ tree: _tree, ...rest }: NpmDependencies | PypiDependencies) => renderCanonicalJson(rest as unknown as CanonicalValue);
    return b !== undefined && plain(a) === plain(b);
  };
  return withProjectLock(root, () => {
    const { lock, text } = readLockfileOrFail(root);
    const dependencies = { ...lock.dependencies };
    let changed = false;
    for (const [id, byEcosystem] of Object.entries(trees)) {
      for (const ecosystem of ["npm", "pypi"] as const) {
        const tree = byEcosystem[ecosystem];
        const locked = dependencies[id]?.[ecosystem];
        if (!tree || !locked || locked.tree === tree || !sameResolution(locked, installed[id]?.[ecosystem])) continue;
        dependencies[id] = { ...dependencies[id], [ecosystem]: { ...locked, tree } };
        changed = true;
      }
    }
    if (!changed) return false;
    writeLockfile(root, { ...lock, dependencies }, text);
    return true;
  });
}

/** Temp files of lockfile writers that were killed before their rename. */
function removeDeadTemps(root: string): void {
  removeDeadLeftovers(root, (name) => (tempTarget(name) === LOCKFILE_NAME ? tempOwner(name) : undefined), (path) => rmSync(path, { force: true }));
}
