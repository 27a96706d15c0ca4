// Pulling one tool artifact from a registry into the cache: manifest, config, signature (per the
// trust policy) and every file blob, each checked against its digest before it is stored.
import { type Eviction, checkBlob, ensureStore, putBlobBytes, type Store } from "../cache/store-io.ts";
import { KiwiError } from "../errors.ts";
import { formatDigest } from "../integrity/digest.ts";
import type { FileEntry } from "../integrity/tool.ts";
import type { RemoteTool } from "../schema/lockfile.ts";
import type { TrustPolicy } from "../trust/keys-io.ts";
import { verifySignature } from "../trust/signature.ts";
import type { RegistryClient } from "./oci-client-io.ts";
import { type ImageManifest, MAX_MANIFEST_BYTES, MEDIA, type ToolConfig, checkToolConfig, parseImageManifest, parseToolManifest, placedFiles } from "./artifact-layout.ts";
import { mapLimit } from "./pool.ts";
import type { OciReference } from "./reference.ts";

const PULL_CONCURRENCY = 8;

export interface PullOptions {
  insecure?: readonly string[];
}

/** A verified artifact: its manifest, config, and (once fetched) every file blob in the cache. */
export interface Pulled {
  ref: OciReference;
  digest: string;
  manifest: ImageManifest;
  config: ToolConfig;
  signature?: RemoteTool["signature"];
  fetched: number;
  /** Cached blobs of the artifact that failed verification: evicted to quarantine/, then fetched again. */
  evicted: Eviction[];
}

/** The image manifest (by tag or digest) and its config, each verified: no file blob is fetched. */
export async function pullConfig(client: RegistryClient, reference: string): Promise<{ digest: string; manifest: ImageManifest; config: ToolConfig }> {
  const got = await client.getManifest(reference);
  const subject = `${client.name()}@${got.digest}`;
  const manifest = parseToolManifest(got.bytes, subject);
  const configBytes = await client.getBlob(manifest.config.digest, manifest.config.size);
  return { digest: got.digest, manifest, config: checkToolConfig(configBytes, manifest, subject) };
}

/** Fetches and verifies manifest, config, signature (per policy) and every file blob into the cache. */
export async function pullArtifact(client: RegistryClient, ref: OciReference, reference: string, store: Store, policy: TrustPolicy): Promise<Pulled> {
  const got = await pullConfig(client, reference);
  const { manifest, config } = got;
  const signature = policy.requireSignature ? await verifyRemoteSignature(client, got.digest, policy, store) : undefined;
  const { fetched, evicted } = await fetchBlobs(client, manifest, placedFiles(config), store);
  return { ref, digest: got.digest, manifest, config, ...(signature ? { signature } : {}), fetched, evicted };
}

/**
 * Puts every file blob the cache lacks; each is checked against its digest before it is stored.
 * A cached one that fails its check is evicted (and returned, to be reported) and fetched again.
 */
async function fetchBlobs(client: RegistryClient, manifest: ImageManifest, files: readonly FileEntry[], store: Store): Promise<{ fetched: number; evicted: Eviction[] }> {
  ensureStore(store);
  const sizes = new Map(manifest.layers.map((l) => [l.digest, l.size]));
  const evicted: Eviction[] = [];
  const missing = [...new Set(files.map((f) => f.sha256))].filter((hex) => {
    const state = checkBlob(store, hex);
    if (typeof state === "object") evicted.push(state);
    return state !== "ok";
  });
  await mapLimit(missing, PULL_CONCURRENCY, async (hex) => {
    const digest = formatDigest(hex);
    putBlobBytes(store, await client.getBlob(digest, sizes.get(digest) ?? 0));
  });
  return { fetched: missing.length, evicted };
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
