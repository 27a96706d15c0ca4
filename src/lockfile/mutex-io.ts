// A cross-process lock around lockfile writes: a lock file created with O_EXCL holding the
// owner's pid, host and a nonce. A lock whose owner process is gone (kill -9, crash) is stale
// and is taken over; stealing goes through a second O_EXCL guard so two waiters cannot both
// steal. Hand-written rather than proper-lockfile: that library judges staleness by mtime and
// needs a refresh timer, so a killed kiwi would block the next one for its whole stale period,
// while a pid check frees the lock at once.
import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { KiwiError } from "../errors.ts";
import { isAlive } from "../cache/projects-io.ts";

export interface LockOptions {
  /** Give up after this long (ms) while a live process holds the lock. */
  timeoutMs?: number;
  pollMs?: number;
  /** Shown in the error when the wait times out, e.g. "tool.lock.json". */
  subject: string;
  /** Told once, when the lock is found held and the wait begins: who holds it, and the lock file. */
  onWait?: (holder: string, path: string) => void;
}

interface Owner {
  pid: number;
  host: string;
  nonce: string;
}

/** A held lock; release() removes the lock file only if it is still ours. */
export interface HeldLock {
  path: string;
  release(): void;
}

/**
 * Takes the lock at `path`, waiting while a live process holds it. In a folder this process may
 * not write (EACCES, EPERM, EROFS: a read-only checkout) it could not write what the lock guards
 * either, and reading needs no lock (writers rename whole files into place): the lock returned
 * then holds nothing, and a write its holder attempts fails on its own.
 */
export async function acquireFileLock(path: string, options: LockOptions): Promise<HeldLock> {
  const me: Owner = { pid: process.pid, host: hostname(), nonce: Math.random().toString(36).slice(2, 12) };
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let told = false;
  for (;;) {
    let created: boolean;
    try {
      created = tryCreate(path, me);
    } catch (error) {
      if (READ_ONLY.has((error as NodeJS.ErrnoException).code ?? "")) return { path, release: () => {} };
      throw error;
    }
    if (created) return { path, release: () => releaseIfOwned(path, me.nonce) };
    const owner = readOwner(path);
    if (owner === "gone") continue;
    // An unreadable lock file is either being written right now or was left half-written by a
    // killed owner; only age tells them apart.
    if (owner === undefined ? ageMs(path) > HALF_WRITTEN_MS : isStale(owner)) {
      stealIfStill(path, owner, me);
      continue;
    }
    const who = owner ? `kiwi process ${owner.pid} on ${owner.host}` : "another kiwi process";
    if (!told) {
      told = true;
      options.onWait?.(who, path);
    }
    if (Date.now() >= deadline) {
      throw new KiwiError("E_IO", `${options.subject} is locked by ${who} (lock file ${path})`, {
        hint: `wait for that kiwi to finish; if none is running, delete ${path}`,
        details: { lock: path, ...(owner ? { pid: owner.pid, host: owner.host } : {}) },
      });
    }
    await Bun.sleep(options.pollMs ?? 50);
  }
}

/** Runs `fn` while holding the lock at `path`. */
export async function withFileLock<T>(path: string, options: LockOptions, fn: () => T | Promise<T>): Promise<T> {
  const lock = await acquireFileLock(path, options);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

/** The errors of creating the lock file in a folder this process may not write. */
const READ_ONLY = new Set(["EACCES", "EPERM", "EROFS"]);

/** How old an unreadable lock file must be before it counts as abandoned. */
const HALF_WRITTEN_MS = 5000;

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function tryCreate(path: string, owner: Owner): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, JSON.stringify(owner));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The owner recorded in the lock file; undefined when unreadable (half-written by a killed owner). */
function readOwner(path: string): Owner | undefined | "gone" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
  try {
    const o = JSON.parse(text) as Owner;
    return typeof o.pid === "number" && typeof o.host === "string" && typeof o.nonce === "string" ? o : undefined;
  } catch {
    return undefined;
  }
}

/** A lock is stale when its owner ran on this host and that process no longer exists. */
function isStale(owner: Owner): boolean {
  return owner.host === hostname() && Number.isSafeInteger(owner.pid) && owner.pid > 0 && !isAlive(owner.pid);
}

/**
 * Removes a stale lock, but only while holding `<path>.steal` and only if the lock file still
 * names the same stale owner; otherwise another waiter already took over and we wait again.
 */
function stealIfStill(path: string, stale: Owner | undefined, me: Owner): void {
  const guard = `${path}.steal`;
  if (!tryCreate(guard, me)) {
    const holder = readOwner(guard);
    if (holder === "gone") return;
    // A stealer that died mid-steal leaves its guard; the same pid rule frees it.
    if (holder === undefined ? ageMs(guard) > HALF_WRITTEN_MS : isStale(holder)) rmSync(guard, { force: true });
    return;
  }
  try {
    const now = readOwner(path);
    const same = now === undefined ? stale === undefined : now !== "gone" && stale !== undefined && now.nonce === stale.nonce;
    if (same) rmSync(path, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

function releaseIfOwned(path: string, nonce: string): void {
  const owner = readOwner(path);
  if (owner !== "gone" && owner !== undefined && owner.nonce === nonce) rmSync(path, { force: true });
}

/**
 * This machine's name, read when a lock is taken or judged: node:os is loaded then and not by the
 * modules that merely import this one (kiwi exec reads lockfiles through lockfile/fs.ts, and
 * evaluating node:os would cost each call ~0.3 ms).
 */
function hostname(): string {
  return (require("node:os") as typeof import("node:os")).hostname();
}
