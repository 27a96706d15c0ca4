// `kiwi add`, `kiwi outdated` and `kiwi update`: tag -> digest, pull and verify (registry/fetch-io.ts),
// check the chain, place (registry/place-io.ts), validate and lock. Nothing reaches .ai/tools/.remote/
// before every byte matched its digest; on any failure the project is put back as it was.
import { removeTree } from "../cache/remove-io.ts";
import { registerProject } from "../cache/projects-io.ts";
import { type Eviction, type Store, openStore } from "../cache/store-io.ts";
import { cacheWriteError } from "./install-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { formatDigest } from "../integrity/digest.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { readLockfile, readLockfileOrFail } from "../lockfile/fs.ts";
import { lockProject } from "./lock-io.ts";
import type { Finding } from "../findings/verdict.ts";
import { hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { readProject } from "../manifest/discover-io.ts";
import { findProjectRoot } from "../manifest/project-io.ts";
import type { McpPin, RemoteTool } from "../schema/lockfile.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { parsePin } from "../mcp/pin.ts";
import { readTrustPolicy } from "../trust/keys-io.ts";
import { RegistryClient } from "../registry/oci-client-io.ts";
import { type PullOptions, type Pulled, pullArtifact, pullConfig } from "../registry/fetch-io.ts";
import { type ToolConfig, placedFiles } from "../registry/artifact-layout.ts";
import { placeTool } from "../registry/place-io.ts";
import { BUILTIN_IDS } from "../manifest/builtins.ts";
import { REMOTE_TOOLS_DIR, isRemoteTool } from "../manifest/model.ts";
import { formatReference, ociSource, parseReference, sourceDigest } from "../registry/reference.ts";

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
  /** Cached blobs that failed their check: evicted to quarantine/ and fetched again. */
  evicted: Eviction[];
  /** The warnings and infos of the lock's check (the added tool's, as it judges what changed). */
  findings: Finding[];
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
  // A remote tool never replaces a built-in: a runtime would take over the chain of every project
  // tool that runs on it (a project's own runtime of that id is the project's choice, not a publisher's).
  if (BUILTIN_IDS.includes(id)) {
    throw new KiwiError("E_USAGE", `${formatReference(pulled.ref)} holds the tool "${id}", the id of kiwi's built-in ${id}; a remote tool cannot replace a built-in`, {
      hint: `a runtime from a registry must be published under an id of its own (its tools then name that id as their executor); nothing was added`,
    });
  }
  const clash = project.tools.find((t) => t.id === id && t.form !== "builtin" && !isRemoteTool(t));
  if (clash) throw new KiwiError("E_USAGE", `the project already has a tool "${id}" (${clash.manifestFile}); a remote tool cannot shadow it`, { hint: "rename or remove the local tool first" });
  assertDependencies(project, config);
  const source = ociSource(pulled.ref, pulled.digest);
  const reference = formatReference({ ...pulled.ref, digest: undefined, ...(pulled.ref.tag ? {} : { digest: pulled.digest }) });
  const before = previous?.tools[id];
  const beforeEntry = previous?.remote?.[id];
  const entry: RemoteTool = { source, reference, integrity: config.integrity, manifest_file: config.manifest_file, manifest_sha256: config.manifest_sha256, ...(pulled.signature ? { signature: pulled.signature } : {}) };
  const pin = publishedPin(config, `${pulled.ref.registry}/${pulled.ref.repository}@${pulled.digest}`);
  // The pulled blobs are this project's now: prune keeps what a registered project's lockfile names
  // (registered before the lock is written, so no prune between the two can take them).
  try {
    registerProject(store, root);
  } catch (error) {
    throw cacheWriteError(store, error);
  }
  const dir = await placeTool(root, store, id, placedFiles(config));
  let findings: Finding[];
  try {
    // The record goes in with the lock entry, in one write: the old record (another integrity)
    // is replaced, not refused, and no kill leaves the files locked without their origin.
    ({ findings } = await lockProject(ctx, { record: { id, entry, ...(pin ? { pin } : {}) } }));
  } catch (error) {
    // Nothing half-added: the folder goes (or the previous version comes back from the cache);
    // the lockfile was not written.
    removeTree(dir);
    if (beforeEntry && before) {
      await placeTool(root, store, id, placedFiles({ files: before.files, manifest_file: beforeEntry.manifest_file, manifest_sha256: beforeEntry.manifest_sha256 })).catch(() => undefined);
    }
    throw error;
  }
  return {
    tool: id,
    version: config.version,
    source,
    reference,
    integrity: config.integrity,
    // The lock's source (an Agent Plugin's server is <folder>/mcp.json#<server>), as it was written.
    path: readLockfile(root)?.lock.tools[id]?.source ?? `${REMOTE_TOOLS_DIR}/${id}/${config.manifest_file}`,
    files: placedFiles(config).length,
    fetched: pulled.fetched,
    evicted: pulled.evicted,
    ...(pulled.signature ? { signedBy: pulled.signature.key_id } : {}),
    ...(before && before.integrity !== config.integrity ? { replaced: { version: before.version, integrity: before.integrity } } : {}),
    findings,
  };
}

/**
 * The interface pin an mcp_server's artifact carries, checked as the lockfile will check it (its
 * hashes re-derived from its snapshot). The tool's integrity does not cover it, so a pin that is
 * malformed, or rides on a tool that is no MCP server, would otherwise reach tool.lock.json and
 * make it unreadable to every later command.
 */
function publishedPin(config: ToolConfig, subject: string): McpPin | undefined {
  if (config.mcp_pin === undefined) return undefined;
  const refuse = (why: string) => new KiwiError("E_ARTIFACT_INVALID", `${subject}: the config's mcp_pin ${why}`, { hint: "the registry served an artifact kiwi did not publish, or it was altered; nothing was installed" });
  if (config.type !== "mcp_server") throw refuse(`is on a ${config.type} tool; only an mcp_server carries one`);
  try {
    return parsePin(config.mcp_pin as CanonicalValue, config.tool_id);
  } catch (error) {
    if (error instanceof KiwiError) throw refuse(`is not a valid pin (${error.message.replace(/^tool\.lock\.json mcp_servers\.[^:]*: /, "")})`);
    throw error;
  }
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

export interface OutdatedEntry {
  tool: string;
  reference: string;
  locked: string;
  /** Where the tag points now; null when the registry could not say (`error`). */
  latest: string | null;
  outdated: boolean;
  /** Why this tool could not be checked (its tag deleted, its registry down): the others still are. */
  error?: { code: string; message: string; hint?: string; exitCode: number };
}

/**
 * `kiwi outdated`: where each remote tool's tag points now (one manifest request per tool). A tool
 * the registry cannot answer for is reported with its error, and the rest are still checked.
 */
export async function listOutdated(ctx: Context, options: PullOptions = {}): Promise<OutdatedEntry[]> {
  const root = findProjectRoot(ctx.cwd);
  const { lock } = readLockfileOrFail(root);
  const out: OutdatedEntry[] = [];
  for (const [id, entry] of Object.entries(lock.remote ?? {})) {
    const ref = parseReference(entry.reference);
    const locked = sourceDigest(entry.source);
    if (!ref.tag) {
      out.push({ tool: id, reference: entry.reference, locked, latest: locked, outdated: false });
      continue;
    }
    try {
      const client = new RegistryClient(ref, { env: ctx.env, home: ctx.home, insecure: options.insecure });
      const latest = await client.resolveTag(ref.tag);
      out.push({ tool: id, reference: entry.reference, locked, latest, outdated: latest !== locked });
    } catch (error) {
      if (!(error instanceof KiwiError)) throw error;
      const why = { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}), exitCode: error.exitCode };
      out.push({ tool: id, reference: entry.reference, locked, latest: null, outdated: false, error: why });
    }
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
  const from = { version: locked.version, digest: sourceDigest(entry.source), manifest: current?.manifest ?? null, files: locked.files };
  const ref = parseReference(entry.reference);
  if (!ref.tag) return { tool: toolId, updated: false, from };
  const store = openStore(ctx.cacheDir, ctx.env);
  const client = new RegistryClient(ref, { env: ctx.env, home: ctx.home, insecure: options.insecure });
  const pulled = await pullArtifact(client, ref, ref.tag, store, readTrustPolicy(root));
  if (pulled.digest === from.digest) return { tool: toolId, updated: false, from };
  if (pulled.config.tool_id !== toolId) {
    throw new KiwiError("E_ARTIFACT_INVALID", `${entry.reference} now holds the tool "${pulled.config.tool_id}", not "${toolId}"`, { hint: `use "kiwi add ${entry.reference}" if you want that tool` });
  }
  // A checkout that has not installed the tool compares with the locked version's own manifest,
  // from its registry, not with nothing (every field would read as new, permissions included).
  if (!current) {
    const source = parseReference(entry.source);
    from.manifest = (await pullConfig(new RegistryClient(source, { env: ctx.env, home: ctx.home, insecure: options.insecure }), from.digest)).config.manifest;
  }
  const added = await placeAndLock(ctx, root, pulled, store);
  return { ...added, tool: toolId, updated: true, from, to: { version: pulled.config.version, digest: pulled.digest, manifest: pulled.config.manifest, files: pulled.config.files } };
}
