// Pulling tools from OCI registries: `kiwi add` (tag -> digest, verify, validate, place, lock),
// the remote step of `kiwi install` (by digest only; a warm cache makes no request), `kiwi
// outdated` and `kiwi update`. Nothing reaches .ai/tools/.remote/ before every byte matched its
// digest, and the tool is swapped in by one rename.
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { materializeTool } from "../cache/materialize-io.ts";
import { isAlive } from "../cache/maintain-io.ts";
import { removeTree } from "../cache/remove-io.ts";
import { hashFileHex } from "../cache/hash-io.ts";
import { type Store, blobPath, checkBlob, ensureStore, openStore, putBlobBytes } from "../cache/store-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { formatDigest } from "../integrity/digest.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { readLockfile, readLockfileOrFail, writeRemoteEntry } from "../lockfile/fs.ts";
import { lockProject } from "../lockfile/lock-io.ts";
import { hashProjectTools } from "../lockfile/tree-io.ts";
import { readProject } from "../manifest/discover-io.ts";
import { TOOLS_DIR, findProjectRoot } from "../manifest/project-io.ts";
import type { McpPin, RemoteTool } from "../schema/lockfile.ts";
import { type TrustPolicy, readTrustPolicy } from "../trust/keys-io.ts";
import { verifySignature } from "../trust/signature.ts";
import { RegistryClient } from "./client-io.ts";
import { type ImageManifest, MAX_MANIFEST_BYTES, MEDIA, type ToolConfig, checkToolConfig, parseImageManifest, parseToolManifest, placedFiles } from "./layout.ts";
import { mapLimit } from "./pool.ts";
import { type OciReference, formatReference, ociSource, parseReference } from "./reference.ts";

/** Where remote tools live, relative to the project root: one folder per tool id. */
export const REMOTE_DIR = join(TOOLS_DIR, ".remote");
const TEMP_DIR = join(".ai", ".kiwi-tmp");
const PULL_CONCURRENCY = 8;

export interface PullOptions {
  insecure?: readonly string[];
}

/** A verified artifact: its manifest, config, and (once fetched) every file blob in the cache. */
interface Pulled {
  ref: OciReference;
  digest: string;
  manifest: ImageManifest;
  config: ToolConfig;
  signature?: RemoteTool["signature"];
  fetched: number;
}

export interface AddResult {
  tool: string;
  version: string;
  source: string;
  reference: string;
  integrity: string;
  path: string;
  files: number;
  fetched: number;
  signedBy?: string;
  replaced?: { version: string; integrity: string };
}

/** `kiwi add`: pulls, verifies, validates and locks one remote tool. */
export async function addRemoteTool(ctx: Context, refText: string, options: PullOptions = {}): Promise<AddResult> {
  const ref = parseReference(refText);
  const root = findProjectRoot(ctx.cwd);
  const policy = readTrustPolicy(root);
  const store = openStore(ctx.cacheDir, ctx.env);
  const client = new RegistryClient(ref, { env: ctx.env, home: ctx.home, insecure: options.insecure });
  const pulled = await pullArtifact(client, ref, ref.digest ?? ref.tag!, store, policy);
  return placeAndLock(ctx, root, pulled, store);
}

async function placeAndLock(ctx: Context, root: string, pulled: Pulled, store: Store): Promise<AddResult> {
  const { config } = pulled;
  const id = config.tool_id;
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const previous = readLockfile(root)?.lock;
  const clash = project.tools.find((t) => t.id === id && t.form !== "builtin" && !t.manifestFile.startsWith(`${REMOTE_DIR}/`));
  if (clash) throw new KiwiError("E_USAGE", `the project already has a tool "${id}" (${clash.manifestFile}); a remote tool cannot shadow it`, { hint: "rename or remove the local tool first" });
  assertDependencies(project, config);
  const source = ociSource(pulled.ref, pulled.digest);
  const reference = formatReference({ ...pulled.ref, digest: undefined, ...(pulled.ref.tag ? {} : { digest: pulled.digest }) });
  const before = previous?.tools[id];
  const beforeEntry = previous?.remote?.[id];
  // The old record names the old integrity; it goes first so locking the new files is not refused.
  if (beforeEntry) await writeRemoteEntry(root, id, undefined);
  const dir = await placeTool(root, store, id, placedFiles(config));
  let lock;
  try {
    await lockProject(ctx, {});
    const pin = config.mcp_pin as McpPin | undefined;
    const entry: RemoteTool = { source, reference, integrity: config.integrity, manifest_file: config.manifest_file, manifest_sha256: config.manifest_sha256, ...(pulled.signature ? { signature: pulled.signature } : {}) };
    lock = await writeRemoteEntry(root, id, entry, pin);
  } catch (error) {
    // Nothing half-added: the folder goes (or the previous version comes back from the cache),
    // and the lockfile is rebuilt as it was.
    removeTree(dir);
    if (beforeEntry && before) {
      await placeTool(root, store, id, placedFiles({ files: before.files, manifest_file: beforeEntry.manifest_file, manifest_sha256: beforeEntry.manifest_sha256 })).catch(() => undefined);
    }
    await lockProject(ctx, {}).catch(() => undefined);
    if (beforeEntry) await writeRemoteEntry(root, id, beforeEntry).catch(() => undefined);
    throw error;
  }
  return {
    tool: id,
    version: config.version,
    source,
    reference,
    integrity: config.integrity,
    path: lock.tools[id]!.source,
    files: placedFiles(config).length,
    fetched: pulled.fetched,
    ...(pulled.signature ? { signedBy: pulled.signature.key_id } : {}),
    ...(before && before.integrity !== config.integrity ? { replaced: { version: before.version, integrity: before.integrity } } : {}),
  };
}

/** The chain tools the artifact names must be in this project with the same integrity. */
function assertDependencies(project: ReturnType<typeof readProject>, config: ToolConfig): void {
  if (config.dependencies.length === 0) return;
  const wanted = new Set(config.dependencies.map((d) => d.tool_id));
  const have = hashProjectTools({ ...project, tools: project.tools.filter((t) => wanted.has(t.id)) });
  for (const dep of config.dependencies) {
    const found = have.find((h) => h.tool.id === dep.tool_id);
    if (!found || formatDigest(found.integrity) !== dep.integrity) {
      throw new KiwiError("E_CHAIN", `"${config.tool_id}" runs on ${dep.tool_id}@${dep.version} (${dep.integrity}), which this project ${found ? `has with integrity ${formatDigest(found.integrity)}` : "does not have"}`, {
        hint: `add ${dep.tool_id}@${dep.version} first (kiwi add its published reference), then add this tool again`,
      });
    }
  }
}

/** Fetches and verifies manifest, config, signature (per policy) and every file blob into the cache. */
async function pullArtifact(client: RegistryClient, ref: OciReference, reference: string, store: Store, policy: TrustPolicy): Promise<Pulled> {
  const got = await client.getManifest(reference);
  const subject = `${client.name()}@${got.digest}`;
  const manifest = parseToolManifest(got.bytes, subject);
  const configBytes = await client.getBlob(manifest.config.digest, manifest.config.size);
  const config = checkToolConfig(configBytes, manifest, subject);
  const signature = policy.requireSignature ? await verifyRemoteSignature(client, got.digest, policy, store) : undefined;
  const fetched = await fetchBlobs(client, manifest, placedFiles(config), store);
  return { ref, digest: got.digest, manifest, config, ...(signature ? { signature } : {}), fetched };
}

/** Puts every file blob the cache lacks; each is checked against its digest before it is stored. */
async function fetchBlobs(client: RegistryClient, manifest: ImageManifest, files: readonly FileEntry[], store: Store): Promise<number> {
  ensureStore(store);
  const sizes = new Map(manifest.layers.map((l) => [l.digest, l.size]));
  const missing = [...new Set(files.map((f) => f.sha256))].filter((hex) => checkBlob(store, hex) !== "ok");
  await mapLimit(missing, PULL_CONCURRENCY, async (hex) => {
    const digest = formatDigest(hex);
    putBlobBytes(store, await client.getBlob(digest, sizes.get(digest) ?? 0));
  });
  return missing.length;
}

/** Finds a signature by a trusted key among the artifact's referrers; refuses otherwise, naming why. */
async function verifyRemoteSignature(client: RegistryClient, digest: string, policy: TrustPolicy, store: Store): Promise<NonNullable<RemoteTool["signature"]>> {
  const { descriptors } = await client.getReferrers(digest);
  const candidates = descriptors.filter((d) => d.artifactType === MEDIA.signature && typeof d.digest === "string");
  const reasons: string[] = [];
  for (const d of candidates) {
    const sig = await client.getManifest(String(d.digest));
    const sigManifest = parseImageManifest(sig.bytes, `signature ${sig.digest}`);
    const layer = sigManifest.layers.find((l) => l.mediaType === MEDIA.signatureLayer);
    if (sigManifest.subject?.digest !== digest || !layer || layer.size > MAX_MANIFEST_BYTES) {
      reasons.push(`${sig.digest} is not a kiwi signature of ${digest}`);
      continue;
    }
    const bytes = await client.getBlob(layer.digest, layer.size);
    const verdict = verifySignature(bytes, digest, policy.keys);
    if (verdict.ok) {
      putBlobBytes(store, bytes);
      return { key_id: verdict.key.id, digest: layer.digest, size: layer.size };
    }
    reasons.push(verdict.reason);
  }
  throw new KiwiError("E_TRUST", `${client.name()}@${digest} has ${candidates.length === 0 ? "no signature" : `no signature by a trusted key: ${reasons.join("; ")}`}, and ${policy.file} requires one`, {
    hint: `ask the publisher to sign it ("kiwi publish --sign <key>"), or add their public key to ${policy.file} if you trust it`,
    details: { artifact: digest, reasons },
  });
}

/** Places verified cached files in .ai/tools/.remote/<id>/ by one rename; returns the folder. */
async function placeTool(root: string, store: Store, id: string, files: readonly FileEntry[]): Promise<string> {
  const remoteDir = join(root, REMOTE_DIR);
  mkdirSync(remoteDir, { recursive: true });
  const ignore = join(remoteDir, ".gitignore");
  if (!existsSync(ignore)) await Bun.write(ignore, "# kiwi: remote tools are installed from tool.lock.json by `kiwi install`\n*\n");
  const tempRoot = join(root, TEMP_DIR);
  removeDeadTemps(tempRoot);
  const temp = join(tempRoot, `${id}.${process.pid}.${Math.random().toString(36).slice(2, 8)}`);
  materializeTool(store, files, temp, { link: false, writableDirs: true });
  const dest = join(remoteDir, id);
  if (existsSync(dest)) {
    const old = `${temp}.old`;
    renameSync(dest, old);
    renameSync(temp, dest);
    removeTree(old);
  } else renameSync(temp, dest);
  try {
    rmdirSync(tempRoot);
  } catch {
    // Another pull is using it, or it holds a dead pull's leftovers for the next cleanup.
  }
  return dest;
}

/** Temp folders of pulls that were killed (kill -9) before their rename. */
function removeDeadTemps(tempRoot: string): void {
  let names: string[];
  try {
    names = readdirSync(tempRoot);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.split(".")[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !isAlive(pid)) removeTree(join(tempRoot, name));
  }
}

export interface SyncResult {
  /** Remote tools whose folder already held the locked bytes. */
  present: number;
  /** Remote tools placed from the cache or the registry. */
  placed: number;
  /** Blobs fetched from registries. */
  fetched: number;
}

/**
 * The remote step of `kiwi install`: every remote tool of the lockfile is placed in
 * .ai/tools/.remote/<id>/ with exactly its locked files, from the cache, or from the registry by
 * the locked digest (never by tag). A folder that already matches is left alone, so a warm
 * project makes no request at all.
 */
export async function syncRemoteTools(ctx: Context, options: PullOptions = {}): Promise<SyncResult> {
  const result: SyncResult = { present: 0, placed: 0, fetched: 0 };
  let root: string;
  try {
    root = findProjectRoot(ctx.cwd);
  } catch {
    return result;
  }
  const read = readLockfile(root);
  if (!read?.lock.remote) return result;
  const store = openStore(ctx.cacheDir, ctx.env);
  const policy = readTrustPolicy(root);
  for (const [id, entry] of Object.entries(read.lock.remote)) {
    const locked = read.lock.tools[id]!;
    const files = placedFiles({ files: locked.files, manifest_file: entry.manifest_file, manifest_sha256: entry.manifest_sha256 });
    if (policy.requireSignature) await assertLockedSignature(id, entry, policy, store, ctx, options);
    const dir = join(root, REMOTE_DIR, id);
    if (folderMatches(dir, files)) {
      result.present++;
      continue;
    }
    if (files.some((f) => checkBlob(store, f.sha256) !== "ok")) {
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
 * Under a signing policy, install re-verifies the signature recorded at add time: from the cache
 * (no request), else fetched by its locked digest. The lockfile names the signature, but only a
 * key in trust.yaml makes it count.
 */
async function assertLockedSignature(id: string, entry: RemoteTool, policy: TrustPolicy, store: Store, ctx: Context, options: PullOptions): Promise<void> {
  const digest = entry.source.slice(entry.source.lastIndexOf("@") + 1);
  if (!entry.signature) {
    throw new KiwiError("E_TRUST", `remote tool "${id}" (${entry.source}) was added without a signature, and ${policy.file} requires one`, { hint: `run "kiwi add ${entry.reference}" again to fetch and check its signature` });
  }
  const hex = entry.signature.digest.slice("sha256:".length);
  if (checkBlob(store, hex) !== "ok") {
    const client = new RegistryClient(parseReference(entry.source), { env: ctx.env, home: ctx.home, insecure: options.insecure });
    ensureStore(store);
    putBlobBytes(store, await client.getBlob(entry.signature.digest, entry.signature.size));
  }
  const verdict = verifySignature(new Uint8Array(readFileSync(blobPath(store, hex))), digest, policy.keys);
  if (!verdict.ok) throw new KiwiError("E_TRUST", `remote tool "${id}" (${entry.source}): ${verdict.reason}`, { hint: `check ${policy.file}` });
}

/** True when `dir` holds exactly the locked files (bytes and executable bits), nothing more. */
function folderMatches(dir: string, files: readonly FileEntry[]): boolean {
  const want = new Map(files.map((f) => [f.path, f]));
  let count = 0;
  const walk = (abs: string, rel: string): boolean => {
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch {
      return false;
    }
    for (const name of names) {
      const path = rel ? `${rel}/${name}` : name;
      const full = join(abs, name);
      const st = lstatSync(full);
      if (st.isDirectory()) {
        if (!walk(full, path)) return false;
        continue;
      }
      const f = want.get(path);
      if (!f || !st.isFile() || ((st.mode & 0o111) !== 0) !== f.is_executable || hashFileHex(full) !== f.sha256) return false;
      count++;
    }
    return true;
  };
  return walk(dir, "") && count === want.size;
}

export interface OutdatedEntry {
  tool: string;
  reference: string;
  locked: string;
  latest: string;
  outdated: boolean;
}

/** `kiwi outdated`: where each remote tool's tag points now (one manifest request per tool). */
export async function listOutdated(ctx: Context, options: PullOptions = {}): Promise<OutdatedEntry[]> {
  const root = findProjectRoot(ctx.cwd);
  const { lock } = readLockfileOrFail(root);
  const out: OutdatedEntry[] = [];
  for (const [id, entry] of Object.entries(lock.remote ?? {})) {
    const ref = parseReference(entry.reference);
    const locked = entry.source.slice(entry.source.lastIndexOf("@") + 1);
    if (!ref.tag) {
      out.push({ tool: id, reference: entry.reference, locked, latest: locked, outdated: false });
      continue;
    }
    const client = new RegistryClient(ref, { env: ctx.env, home: ctx.home, insecure: options.insecure });
    const latest = await client.resolveTag(ref.tag);
    out.push({ tool: id, reference: entry.reference, locked, latest, outdated: latest !== locked });
  }
  return out;
}

export interface UpdateResult extends Partial<AddResult> {
  tool: string;
  updated: boolean;
  from: { version: string; digest: string; manifest: unknown; files: FileEntry[] };
  to?: { version: string; digest: string; manifest: unknown; files: FileEntry[] };
}

/** `kiwi update <tool>`: moves a remote tool to what its tag points to now; the caller shows the diff. */
export async function updateRemoteTool(ctx: Context, toolId: string, options: PullOptions = {}): Promise<UpdateResult> {
  const root = findProjectRoot(ctx.cwd);
  const { lock } = readLockfileOrFail(root);
  const entry = lock.remote?.[toolId];
  if (!entry) {
    throw new KiwiError("E_TOOL_NOT_FOUND", `"${toolId}" is not a remote tool in tool.lock.json`, { hint: 'only tools added with "kiwi add" can be updated; "kiwi outdated" lists them' });
  }
  const locked = lock.tools[toolId]!;
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const current = project.tools.find((t) => t.id === toolId);
  const from = { version: locked.version, digest: entry.source.slice(entry.source.lastIndexOf("@") + 1), manifest: current?.manifest ?? null, files: locked.files };
  const ref = parseReference(entry.reference);
  if (!ref.tag) return { tool: toolId, updated: false, from };
  const store = openStore(ctx.cacheDir, ctx.env);
  const client = new RegistryClient(ref, { env: ctx.env, home: ctx.home, insecure: options.insecure });
  const pulled = await pullArtifact(client, ref, ref.tag, store, readTrustPolicy(root));
  if (pulled.digest === from.digest) return { tool: toolId, updated: false, from };
  if (pulled.config.tool_id !== toolId) {
    throw new KiwiError("E_ARTIFACT_INVALID", `${entry.reference} now holds the tool "${pulled.config.tool_id}", not "${toolId}"`, { hint: `use "kiwi add ${entry.reference}" if you want that tool` });
  }
  const added = await placeAndLock(ctx, root, pulled, store);
  return { ...added, tool: toolId, updated: true, from, to: { version: pulled.config.version, digest: pulled.digest, manifest: pulled.config.manifest, files: pulled.config.files } };
}
