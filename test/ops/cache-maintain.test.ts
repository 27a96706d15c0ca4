import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanCache, pruneCache, verifyCache } from "../../src/ops/cache-maintain-io.ts";
import { registerProject } from "../../src/cache/projects-io.ts";
import { projectKey } from "../../src/cache/cache-layout.ts";
import { blobPath, ensureStore, indexPath, openStore, putBlobBytes, writeToolEntry } from "../../src/cache/store-io.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { hashToolIntegrity } from "../../src/integrity/tool.ts";
import { renderLockfile } from "../../src/lockfile/render.ts";
import { entry, file, lockOf } from "../lockfile/helpers.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const OLD = new Date(Date.now() - 3600_000);

function filled() {
  const store = openStore(join(makeTemp("kiwi-cache-"), "cache"));
  ensureStore(store);
  const kept = putBlobBytes(store, new TextEncoder().encode("kept"));
  const orphan = putBlobBytes(store, new TextEncoder().encode("orphan"));
  const tool = hashToolIntegrity({ tool_id: "t", version: "1.0.0", manifest: { tool_id: "t" }, files: [file("k", "kept")] });
  writeToolEntry(store, tool.hex, tool.canonical);
  const root = makeTemp("kiwi-project-");
  writeFileSync(join(root, "tool.lock.json"), renderLockfile(lockOf({ t: entry("t", { tool_id: "t" }, [file("k", "kept")]) })));
  registerProject(store, root);
  for (const p of [blobPath(store, kept), blobPath(store, orphan), indexPath(store, tool.hex)]) utimesSync(p, OLD, OLD);
  return { store, kept, orphan, integrity: tool.hex, root };
}

/**
 * A moment safely after everything a test wrote: a file's mtime has sub-millisecond precision and
 * Date.now() does not, so a file written in the same millisecond reads as newer than "now" and a
 * grace period of 0 would keep it.
 */
const AFTER_WRITES = () => Date.now() + 1000;

describe("cache maintenance", () => {
  test("verify re-hashes everything and evicts what fails", () => {
    const { store, orphan } = filled();
    expect(verifyCache(store)).toMatchObject({ blobs: 2, index: 1, evicted: [] });
    chmodSync(blobPath(store, orphan), 0o644);
    writeFileSync(blobPath(store, orphan), "flipped");
    const report = verifyCache(store);
    expect(report.evicted).toMatchObject([{ kind: "blob", expected: orphan, actual: sha256Hex("flipped") }]);
    expect(existsSync(blobPath(store, orphan))).toBe(false);
  });

  test("verify removes temp files left by a writer that died, not by live ones", () => {
    const { store, kept } = filled();
    const dir = join(store.dir, "blobs", kept.slice(0, 2));
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(join(dir, `.x.tmp-${dead}-abc`), "partial");
    writeFileSync(join(dir, `.y.tmp-${process.pid}-abc`), "mine");
    expect(verifyCache(store).tempsRemoved).toBe(1);
    expect(readdirSync(dir).filter((n) => n.startsWith("."))).toEqual([`.y.tmp-${process.pid}-abc`]);
  });

  test("prune removes what no registered lockfile references, and keeps what one does", () => {
    const { store, kept, orphan, integrity } = filled();
    const report = pruneCache(store, { graceMs: 0, now: AFTER_WRITES() });
    expect(report).toMatchObject({ removedBlobs: 1, removedIndex: 0 });
    expect(existsSync(blobPath(store, kept))).toBe(true);
    expect(existsSync(indexPath(store, integrity))).toBe(true);
    expect(existsSync(blobPath(store, orphan))).toBe(false);
  });

  test("prune keeps unreferenced entries used within the grace period (an install may be running)", () => {
    const { store, orphan } = filled();
    utimesSync(blobPath(store, orphan), new Date(), new Date());
    expect(pruneCache(store, { graceMs: 600_000, now: Date.now() })).toMatchObject({ removedBlobs: 0, keptRecent: 1 });
    expect(existsSync(blobPath(store, orphan))).toBe(true);
  });

  test("prune reports a lockfile it cannot read; what only that lockfile referenced goes (the tree restores it)", () => {
    const { store, kept, root } = filled();
    writeFileSync(join(root, "tool.lock.json"), "");
    const report = pruneCache(store, { graceMs: 0, now: AFTER_WRITES() });
    expect(report.skipped).toMatchObject([{ root, reason: expect.stringContaining("is empty") }]);
    expect(existsSync(blobPath(store, kept))).toBe(false);
  });

  test("prune forgets a project whose lockfile is gone", () => {
    const { store, root } = filled();
    rmSync(join(root, "tool.lock.json"));
    expect(pruneCache(store, { graceMs: 0, now: AFTER_WRITES() }).projects).toEqual([]);
    expect(readdirSync(join(store.dir, "projects"))).toEqual([]);
  });

  test("prune removes the stat caches, tree memos and lock indexes of projects it forgot, and keeps a live one's", () => {
    const { store, root } = filled();
    const stat = join(store.dir, "stat");
    mkdirSync(stat, { recursive: true });
    const live = projectKey(root);
    const gone = projectKey("/gone/project");
    const names = (key: string) => [`${key}.stat`, `${key}.tree.json`, `${key}.index`, `${key}.json`];
    for (const name of [...names(live), ...names(gone)]) writeFileSync(join(stat, name), "x");
    pruneCache(store, { graceMs: 0, now: AFTER_WRITES() });
    expect(readdirSync(stat).sort()).toEqual(names(live).sort());
  });

  test("prune removes exec's memos not written within the grace period (the next call derives them again)", () => {
    const { store } = filled();
    const memo = (kind: string, name: string) => {
      const path = join(store.dir, "exec", kind, name.slice(0, 2), name.slice(2));
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, "x", { mode: 0o444 });
      return path;
    };
    const old = [memo("launches", "aa01"), memo("chains", "bb02")];
    const fresh = memo("launches", "cc03");
    for (const path of old) utimesSync(path, OLD, OLD);
    expect(pruneCache(store, { graceMs: 600_000, now: Date.now() }).removedOther).toBe(2);
    expect([...old, fresh].map((path) => existsSync(path))).toEqual([false, false, true]);
  });

  test("clean removes kiwi's entries and nothing else in the folder", () => {
    const { store } = filled();
    mkdirSync(join(store.dir, "mine"));
    expect(cleanCache(store).sort()).toEqual(["CACHEDIR.TAG", "blobs", "index", "projects"]);
    expect(readdirSync(store.dir)).toEqual(["mine"]);
  });
});
