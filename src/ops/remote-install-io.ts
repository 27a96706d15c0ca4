// The remote step of `kiwi install`: every remote tool of the lockfile placed with exactly its
// locked files, by digest only, from the cache when it can (a warm project makes no request).
import { type Dirent, readFileSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { type Eviction, blobPath, checkBlob, ensureStore, openStore, putBlobBytes, type Store } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { readLockfile } from "../lockfile/fs.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import type { RemoteTool } from "../schema/lockfile.ts";
import { type TrustPolicy, readTrustPolicy } from "../trust/keys-io.ts";
import { verifySignature } from "../trust/signature.ts";
import { RegistryClient } from "../registry/oci-client-io.ts";
import { type PullOptions, pullArtifact } from "../registry/fetch-io.ts";
import { placedFiles } from "../registry/artifact-layout.ts";
import { folderMatches, placeTool, releaseTemps, tempPathFor } from "../registry/place-io.ts";
import { removeTree } from "../cache/remove-io.ts";
import { REMOTE_TOOLS_DIR } from "../manifest/model.ts";
import { parseReference, sourceDigest } from "../registry/reference.ts";

export interface SyncResult {
  /** Remote tools whose folder already held the locked bytes. */
  present: number;
  /** Remote tools placed from the cache or the registry. */
  placed: number;
  /** Blobs fetched from registries. */
  fetched: number;
  /** Folders of .ai/tools/.remote/ the lockfile records no remote tool for (another checkout's kiwi remove), removed. */
  removed: string[];
  /** Cached blobs of remote tools that failed verification: evicted to quarantine/, then fetched again by digest. */
  evicted: Eviction[];
}

/**
 * The remote step of `kiwi install`: every remote tool of the lockfile is placed in
 * .ai/tools/.remote/<id>/ with exactly its locked files, from the cache, or from the registry by
 * the locked digest (never by tag). A folder that already matches is left alone, so a warm
 * project makes no request at all.
 */
export async function syncRemoteTools(ctx: Context, options: PullOptions = {}): Promise<SyncResult> {
  const result: SyncResult = { present: 0, placed: 0, fetched: 0, removed: [], evicted: [] };
  let root: string;
  try {
    root = findProjectRoot(ctx.cwd);
  } catch {
    return result;
  }
  const read = readLockfile(root);
  if (!read) return result;
  result.removed = removeUnrecorded(root, read.lock.remote ?? {});
  if (!read.lock.remote) return result;
  const store = openStore(ctx.cacheDir, ctx.env);
  const policy = readTrustPolicy(root);
  for (const [id, entry] of Object.entries(read.lock.remote)) {
    const locked = read.lock.tools[id]!;
    const files = placedFiles({ files: locked.files, manifest_file: entry.manifest_file, manifest_sha256: entry.manifest_sha256 });
    if (policy.requireSignature) await assertLockedSignature(id, entry, policy, store, ctx, options, result.evicted);
    const dir = join(root, REMOTE_TOOLS_DIR, id);
    if (folderMatches(dir, files)) {
      result.present++;
      continue;
    }
    // Every blob is checked (not up to the first that fails), so each corrupt one is evicted and reported here.
    const states = files.map((f) => checkBlob(store, f.sha256));
    for (const state of states) if (typeof state === "object") result.evicted.push(state);
    if (states.some((state) => state !== "ok")) {
      const ref = parseReference(entry.source);
      const client = new RegistryClient(ref, { env: ctx.env, home: ctx.home, insecure: options.insecure });
      const pulled = await pullArtifact(client, ref, ref.digest!, store, { requireSignature: false, keys: [] });
      if (pulled.config.integrity !== entry.integrity) {
        throw new KiwiError("E_ARTIFACT_INVALID", `${entry.source} holds integrity ${pulled.config.integrity}, the lockfile ${entry.integrity}`, { hint: "the lockfile was edited by hand; run kiwi add again" });
      }
      result.fetched += pulled.fetched;
    }
    await placeTool(root, store, id, files);
    result.placed++;
  }
  return result;
}

/**
 * .ai/tools/.remote/ holds what the lockfile records, as node_modules holds what package-lock.json
 * does: a folder there of a tool it has no remote record of is what a kiwi remove in another
 * checkout left behind (the lockfile came through git without it). It goes, through .ai/.kiwi-tmp/,
 * before the lock could take it for a project tool.
 */
function removeUnrecorded(root: string, remote: Record<string, RemoteTool>): string[] {
  const dir = join(root, REMOTE_TOOLS_DIR);
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || Object.hasOwn(remote, e.name)) continue;
    const aside = tempPathFor(root, e.name);
    renameSync(join(dir, e.name), aside);
    removeTree(aside);
    removed.push(e.name);
  }
  if (removed.length > 0) releaseTemps(root);
  return removed.sort();
}

/**
 * Under a signing policy, install re-verifies the signature recorded at add time: from the cache
 * (no request), else fetched by its locked digest. The lockfile names the signature, but only a
 * key in trust.yaml makes it count.
 */
async function assertLockedSignature(id: string, entry: RemoteTool, policy: TrustPolicy, store: Store, ctx: Context, options: PullOptions, evicted: Eviction[]): Promise<void> {
  const digest = sourceDigest(entry.source);
  if (!entry.signature) {
    throw new KiwiError("E_TRUST", `remote tool "${id}" (${entry.source}) was added without a signature, and ${policy.file} requires one`, { hint: `run "kiwi add ${entry.reference}" again to fetch and check its signature` });
  }
  const hex = entry.signature.digest.slice("sha256:".length);
  const state = checkBlob(store, hex);
  if (typeof state === "object") evicted.push(state);
  if (state !== "ok") {
    const client = new RegistryClient(parseReference(entry.source), { env: ctx.env, home: ctx.home, insecure: options.insecure });
    ensureStore(store);
    putBlobBytes(store, await client.getBlob(entry.signature.digest, entry.signature.size));
  }
  const verdict = verifySignature(new Uint8Array(readFileSync(blobPath(store, hex))), digest, policy.keys);
  if (!verdict.ok) throw new KiwiError("E_TRUST", `remote tool "${id}" (${entry.source}): ${verdict.reason}`, { hint: `check ${policy.file}` });
}
