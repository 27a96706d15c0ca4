// `kiwi publish` as a core operation: the tool must pass `kiwi check --strict`; its files, config
// and image manifest are pushed (blobs the repository has are skipped), then the tag; with a key,
// an ed25519 signature is attached as an OCI referrer (referrers tag fallback for registries
// without the referrers API).
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { severityOf } from "../findings/finding.ts";
import { formatDigest, sha256Hex } from "../integrity/digest.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { readLockfile } from "../lockfile/fs.ts";
import { hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { BUILTIN_IDS } from "../manifest/builtins.ts";
import { readProject } from "../manifest/discover-io.ts";
import { type Tool, manifestPathOf } from "../manifest/model.ts";
import { readPrivateKey } from "../trust/keys-io.ts";
import { signArtifact } from "../trust/signature.ts";
import { checkTree } from "./check-io.ts";
import { RegistryClient, referrersTag } from "../registry/oci-client-io.ts";
import { type Dependency, MEDIA, buildArtifact } from "../registry/artifact-layout.ts";
import { mapLimit } from "../registry/pool.ts";
import { formatReference, parseReference } from "../registry/reference.ts";
import { suggest } from "../resolve/suggest.ts";

export interface PublishOptions {
  insecure?: readonly string[];
  /** Private key file: sign the artifact. */
  signKey?: string;
}

export interface PublishResult {
  tool: string;
  version: string;
  reference: string;
  digest: string;
  integrity: string;
  files: number;
  pushed: number;
  present: number;
  dependencies: Dependency[];
  mcpPin: boolean;
  signature?: { keyId: string; digest: string };
}

const PUSH_CONCURRENCY = 8;

/** Publishes one tool version under `target` (registry/repository:tag). */
export async function publishTool(ctx: Context, toolId: string, target: string, options: PublishOptions = {}): Promise<PublishResult> {
  const ref = parseReference(target);
  if (!ref.tag || ref.digest) throw new KiwiError("E_USAGE", `publish needs a tag, not a digest: ${target}`, { hint: "write registry/repository:tag" });
  const privateKey = options.signKey ? readPrivateKey(options.signKey) : undefined;
  publishable(readProject(ctx.cwd, { cacheDir: ctx.cacheDir }), toolId);
  const { result } = await checkTree({ cwd: ctx.cwd, env: ctx.env, cacheDir: ctx.cacheDir, now: ctx.now(), strict: true, targets: [toolId] });
  // A credential in a remote tool is a warning to its consumer, who cannot change the tool
  // (validate/credentials.ts); published again, it would reach another registry: here it is the
  // error it is in any tool of one's own.
  const findings = result.findings.map((f) => (f.rule === "security/secret-literal" ? { ...f, severity: severityOf("security/secret-literal") } : f));
  const error = findings.filter((f) => f.severity === "error").length;
  if (error > 0) {
    const warning = findings.filter((f) => f.severity === "warning").length;
    throw new KiwiError("E_CHECK_FAILED", `tool "${toolId}" does not pass "kiwi check --strict" (${error} error${error === 1 ? "" : "s"}, ${warning} warning${warning === 1 ? "" : "s"}); nothing was published`, {
      hint: `fix what the check reports (run "kiwi check --strict ${toolId}" to check again), then publish`,
      details: { findings },
    });
  }
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const byId = new Map(project.tools.map((t) => [t.id, t]));
  const tool = publishable(project, toolId);
  // The chain below the tool: built-ins come with every kiwi; anything else the consumer must have.
  const chain: Tool[] = [];
  for (let t = tool.executor ? byId.get(tool.executor.id) : undefined; t && t.form !== "builtin" && !chain.includes(t); t = t.executor ? byId.get(t.executor.id) : undefined) chain.push(t);
  const [hashed, ...deps] = hashProjectTools({ ...project, tools: [tool, ...chain] });
  const contents = new Map<string, Uint8Array>();
  const sizes = new Map<string, number>();
  for (const file of tool.files) {
    const bytes = new Uint8Array(readFileSync(file.abs));
    const hex = sha256Hex(bytes);
    if (hashed!.files.find((f) => f.path === file.path)?.sha256 !== hex) {
      throw new KiwiError("E_IO", `${file.path} of tool "${toolId}" changed while it was being published`, { hint: "run kiwi publish again" });
    }
    contents.set(hex, bytes);
    sizes.set(hex, bytes.length);
  }
  const manifestBytes = new Uint8Array(readFileSync(join(project.root, manifestPathOf(tool.manifestFile))));
  const manifestSha256 = sha256Hex(manifestBytes);
  contents.set(manifestSha256, manifestBytes);
  sizes.set(manifestSha256, manifestBytes.length);
  const pin = tool.type === "mcp_server" ? (readLockfile(project.root)?.lock.mcp_servers[toolId] as CanonicalValue | undefined) : undefined;
  const dependencies = deps.map((d) => ({ tool_id: d.tool.id, version: d.tool.version, integrity: formatDigest(d.integrity) }));
  const artifact = buildArtifact({
    toolId,
    version: tool.version,
    type: tool.type,
    manifestFile: relative(tool.rootAbs, join(project.root, manifestPathOf(tool.manifestFile))).split(sep).join("/"),
    manifestSha256,
    manifest: tool.manifest,
    files: hashed!.files,
    sizes,
    dependencies,
    ...(pin ? { mcpPin: pin } : {}),
  });
  const client = new RegistryClient(ref, { env: ctx.env, home: ctx.home, insecure: options.insecure });
  const outcomes = await mapLimit([...contents.entries()], PUSH_CONCURRENCY, ([hex, bytes]) => client.pushBlob(bytes, formatDigest(hex)));
  await client.pushBlob(artifact.config, artifact.configDigest);
  await client.putManifest(ref.tag, artifact.manifest, MEDIA.manifest);
  const out: PublishResult = {
    tool: toolId,
    version: tool.version,
    reference: formatReference(ref),
    digest: artifact.manifestDigest,
    integrity: artifact.integrity,
    files: contents.size,
    pushed: outcomes.filter((o) => o === "pushed").length,
    present: outcomes.filter((o) => o === "present").length,
    dependencies,
    mcpPin: pin !== undefined,
  };
  if (privateKey) out.signature = await attachSignature(client, artifact, { tool_id: toolId, version: tool.version }, privateKey);
  return out;
}

/** The tool to publish is named by its id, and is the project's own (a built-in comes with every kiwi). */
function publishable(project: ReturnType<typeof readProject>, toolId: string): Tool {
  const tool = project.tools.find((t) => t.id === toolId);
  if (tool && tool.form !== "builtin" && BUILTIN_IDS.includes(toolId)) {
    // kiwi add refuses a remote tool of a built-in's id (it would take over every chain on it).
    throw new KiwiError("E_USAGE", `"${toolId}" is the project's own ${toolId}, which replaces kiwi's built-in here; no project can add it from a registry, since a remote tool may not replace a built-in`, {
      hint: `publish it under an id of its own (set tool_id in ${tool.manifestFile}) and point the executor of its tools at that id`,
    });
  }
  if (tool && tool.form !== "builtin") return tool;
  if (tool) throw new KiwiError("E_TOOL_NOT_FOUND", `"${toolId}" is built into kiwi, not a tool of the project`, { hint: 'built-in tools come with every kiwi and are not published; run "kiwi list" to see the project tools' });
  const near = suggest(toolId, project.tools.filter((t) => t.form !== "builtin").map((t) => t.id));
  throw new KiwiError("E_TOOL_NOT_FOUND", `no project tool has the id "${toolId}"`, {
    hint: near ? `did you mean "${near}"? (kiwi publish takes a tool id)` : 'kiwi publish takes a tool id; run "kiwi list" to see the project tools',
  });
}

/** Pushes a signature artifact whose subject is the tool's manifest, and lists it for the referrers fallback. */
async function attachSignature(
  client: RegistryClient,
  artifact: { manifest: Uint8Array; manifestDigest: string; integrity: string },
  tool: { tool_id: string; version: string },
  privateKey: ReturnType<typeof readPrivateKey>,
): Promise<{ keyId: string; digest: string }> {
  const { document, bytes } = signArtifact({ kiwi_signature: 1, artifact: artifact.manifestDigest, tool_id: tool.tool_id, version: tool.version, integrity: artifact.integrity }, privateKey);
  const empty = new TextEncoder().encode("{}");
  const sigDigest = formatDigest(sha256Hex(bytes));
  await client.pushBlob(empty);
  await client.pushBlob(bytes, sigDigest);
  const manifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    artifactType: MEDIA.signature,
    config: { mediaType: MEDIA.empty, digest: formatDigest(sha256Hex(empty)), size: empty.length },
    layers: [{ mediaType: MEDIA.signatureLayer, digest: sigDigest, size: bytes.length }],
    subject: { mediaType: MEDIA.manifest, digest: artifact.manifestDigest, size: artifact.manifest.length },
    annotations: { "dev.kiwi.signature.key": document.key_id },
  };
  const manifestBytes = new TextEncoder().encode(JSON.stringify(manifest));
  const manifestDigest = formatDigest(sha256Hex(manifestBytes));
  await client.putManifest(manifestDigest, manifestBytes, MEDIA.manifest);
  // Registries with the referrers API index the subject themselves; the others (distribution
  // 2.8) need the fallback tag, which kiwi reads too. Writing it on both keeps one code path.
  const existing = await client.getReferrers(artifact.manifestDigest);
  if (!existing.api) {
    const descriptors = existing.descriptors.filter((d) => d.digest !== manifestDigest);
    descriptors.push({ mediaType: MEDIA.manifest, digest: manifestDigest, size: manifestBytes.length, artifactType: MEDIA.signature, annotations: manifest.annotations });
    const index = new TextEncoder().encode(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.index, manifests: descriptors }));
    await client.putManifest(referrersTag(artifact.manifestDigest), index, MEDIA.index);
  }
  return { keyId: document.key_id, digest: sigDigest };
}
