// The kiwi tool artifact: how one locked tool version becomes an OCI image manifest (v1.1,
// artifactType application/vnd.kiwi.tool.v1), its config blob and one layer per file, and the
// checks a pulled artifact must pass before any of it is used. Pure. README "Registry artifact
// layout" documents exactly this; change both together.
import { KiwiError } from "../errors.ts";
import { compareCodePoints, renderCanonicalJson } from "../integrity/canonical.ts";
import { formatDigest, hashCanonical, sha256Hex } from "../integrity/digest.ts";
import { type FileEntry, hashToolIntegrity } from "../integrity/tool.ts";
import { type CanonicalValue, isMapping, isRecord, toPlain } from "../integrity/value.ts";
import { toolPathProblem } from "../integrity/tool-path.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";

export const MEDIA = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  index: "application/vnd.oci.image.index.v1+json",
  artifact: "application/vnd.kiwi.tool.v1",
  config: "application/vnd.kiwi.tool.config.v1+json",
  file: "application/vnd.kiwi.tool.file.v1",
  manifestFile: "application/vnd.kiwi.tool.manifest.v1",
  signature: "application/vnd.kiwi.signature.v1",
  signatureLayer: "application/vnd.kiwi.signature.v1+json",
  empty: "application/vnd.oci.empty.v1+json",
} as const;

/** Annotation keys on the image manifest. */
export const ANNOTATIONS = {
  id: "dev.kiwi.tool.id",
  version: "dev.kiwi.tool.version",
  type: "dev.kiwi.tool.type",
  integrity: "dev.kiwi.tool.integrity",
  title: "org.opencontainers.image.title",
} as const;

/** Manifests and configs larger than this are refused unread (distribution's own limit is 4 MiB). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** No single tool file larger than this is pulled. */
export const MAX_BLOB_BYTES = 512 * 1024 * 1024;

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType: string;
  artifactType?: string;
  config: Descriptor;
  layers: Descriptor[];
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

/** A chain tool the artifact needs in the consumer's project (a non-built-in executor). */
export interface Dependency {
  tool_id: string;
  version: string;
  integrity: string;
}

/** The config blob: everything the integrity is computed from, plus what a consumer must provide. */
export interface ToolConfig {
  kiwi_artifact: 1;
  tool_id: string;
  version: string;
  type: string;
  integrity: string;
  manifest_digest: string;
  /** The manifest file, relative to the tool root (for a script with embedded metadata, one of `files`). */
  manifest_file: string;
  /** sha256 hex of the manifest file's bytes: its layer. */
  manifest_sha256: string;
  manifest: CanonicalValue;
  files: FileEntry[];
  dependencies: Dependency[];
  /** The publisher's MCP interface pin (mcp_server tools only), verified against the live server by consumers. */
  mcp_pin?: CanonicalValue;
}

/** What publishing needs to know about the tool. */
export interface PublishInput {
  toolId: string;
  version: string;
  type: string;
  manifestFile: string;
  /** sha256 hex of the manifest file's bytes (its size is in `sizes`). */
  manifestSha256: string;
  manifest: CanonicalValue;
  files: FileEntry[];
  /** File sizes by sha256 hex. */
  sizes: ReadonlyMap<string, number>;
  dependencies: Dependency[];
  mcpPin?: CanonicalValue;
}

/** The bytes of an artifact: its config blob and manifest, and the file layers it references. */
export interface BuiltArtifact {
  config: Uint8Array;
  configDigest: string;
  manifest: Uint8Array;
  manifestDigest: string;
  integrity: string;
}

/** Builds the artifact for one tool version. Deterministic: the same tool gives the same digest. */
export function buildArtifact(input: PublishInput): BuiltArtifact {
  const files = [...input.files].sort((a, b) => compareCodePoints(a.path, b.path)).map((f) => ({ path: f.path, sha256: f.sha256, is_executable: f.is_executable === true }));
  const integrity = formatDigest(hashToolIntegrity({ tool_id: input.toolId, version: input.version, manifest: input.manifest, files }).hex);
  const config: Record<string, CanonicalValue> = {
    kiwi_artifact: 1,
    tool_id: input.toolId,
    version: input.version,
    type: input.type,
    integrity,
    manifest_digest: formatDigest(hashCanonical(input.manifest).hex),
    manifest_file: input.manifestFile,
    manifest_sha256: input.manifestSha256,
    manifest: input.manifest,
    files: files as unknown as CanonicalValue,
    dependencies: input.dependencies as unknown as CanonicalValue,
  };
  if (input.mcpPin !== undefined) config.mcp_pin = input.mcpPin;
  const configBytes = new TextEncoder().encode(renderCanonicalJson(config));
  const configDigest = formatDigest(sha256Hex(configBytes));
  const layers: Descriptor[] = [
    { mediaType: MEDIA.manifestFile, digest: formatDigest(input.manifestSha256), size: input.sizes.get(input.manifestSha256) ?? 0, annotations: { [ANNOTATIONS.title]: input.manifestFile } },
    ...files.map((f) => ({
      mediaType: MEDIA.file,
      digest: formatDigest(f.sha256),
      size: input.sizes.get(f.sha256) ?? 0,
      annotations: { [ANNOTATIONS.title]: f.path },
    })),
  ];
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    artifactType: MEDIA.artifact,
    config: { mediaType: MEDIA.config, digest: configDigest, size: configBytes.length },
    layers,
    annotations: { [ANNOTATIONS.id]: input.toolId, [ANNOTATIONS.version]: input.version, [ANNOTATIONS.type]: input.type, [ANNOTATIONS.integrity]: integrity },
  };
  const manifestBytes = new TextEncoder().encode(JSON.stringify(manifest));
  return { config: configBytes, configDigest, manifest: manifestBytes, manifestDigest: formatDigest(sha256Hex(manifestBytes)), integrity };
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

function invalid(subject: string, why: string): KiwiError {
  return new KiwiError("E_ARTIFACT_INVALID", `${subject}: ${why}`, { hint: "the registry served an artifact kiwi did not publish, or it was altered; nothing was installed" });
}

function descriptor(value: unknown, subject: string): Descriptor {
  if (!isRecord(value)) throw invalid(subject, "a descriptor is not an object");
  const { mediaType, digest, size } = value;
  if (typeof mediaType !== "string") throw invalid(subject, "a descriptor has no mediaType");
  if (typeof digest !== "string" || !DIGEST.test(digest)) throw invalid(subject, `a descriptor's digest ${JSON.stringify(digest)} is not sha256:<64 hex>`);
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) throw invalid(subject, `the descriptor of ${digest} has no valid size`);
  const annotations = isRecord(value.annotations) ? (value.annotations as Record<string, string>) : undefined;
  return { mediaType, digest, size, ...(typeof value.artifactType === "string" ? { artifactType: value.artifactType } : {}), ...(annotations ? { annotations } : {}) };
}

/** Parses manifest bytes (already checked against their digest) and checks they describe a kiwi tool. */
export function parseToolManifest(bytes: Uint8Array, subject: string): ImageManifest {
  const manifest = parseImageManifest(bytes, subject);
  if (manifest.artifactType !== MEDIA.artifact && manifest.config.mediaType !== MEDIA.config) {
    throw invalid(subject, `it is not a kiwi tool (artifactType ${JSON.stringify(manifest.artifactType ?? null)})`);
  }
  if (manifest.config.mediaType !== MEDIA.config) throw invalid(subject, `the config media type is ${manifest.config.mediaType}, not ${MEDIA.config}`);
  if (manifest.config.size > MAX_MANIFEST_BYTES) throw invalid(subject, `the config blob claims ${manifest.config.size} bytes (limit ${MAX_MANIFEST_BYTES})`);
  for (const layer of manifest.layers) {
    if (layer.mediaType !== MEDIA.file && layer.mediaType !== MEDIA.manifestFile) throw invalid(subject, `layer ${layer.digest} has media type ${layer.mediaType}, not ${MEDIA.file}`);
    if (layer.size > MAX_BLOB_BYTES) throw invalid(subject, `layer ${layer.digest} claims ${layer.size} bytes (limit ${MAX_BLOB_BYTES})`);
  }
  return manifest;
}

/** Parses any OCI image manifest (the tool's or a signature's). */
export function parseImageManifest(bytes: Uint8Array, subject: string): ImageManifest {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw invalid(subject, "the manifest is not UTF-8 JSON");
  }
  if (!isRecord(value) || value.schemaVersion !== 2) throw invalid(subject, "the manifest is not an OCI image manifest (schemaVersion 2)");
  if (value.mediaType !== undefined && value.mediaType !== MEDIA.manifest) throw invalid(subject, `the manifest media type is ${String(value.mediaType)}`);
  if (!Array.isArray(value.layers)) throw invalid(subject, "the manifest has no layers array");
  return {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    ...(typeof value.artifactType === "string" ? { artifactType: value.artifactType } : {}),
    config: descriptor(value.config, subject),
    layers: value.layers.map((l) => descriptor(l, subject)),
    ...(value.subject !== undefined ? { subject: descriptor(value.subject, subject) } : {}),
    ...(isRecord(value.annotations) ? { annotations: value.annotations as Record<string, string> } : {}),
  };
}

/**
 * Parses the config blob (already checked against its digest), recomputes the integrity from
 * the manifest value and file entries it holds, and checks it against the manifest's layers and
 * annotations. Returns the config and each file's layer size.
 */
export function checkToolConfig(bytes: Uint8Array, manifest: ImageManifest, subject: string): ToolConfig {
  let value: CanonicalValue;
  try {
    value = parseJsonLossless(new TextDecoder("utf-8", { fatal: true }).decode(bytes), { positions: false }).value;
  } catch {
    throw invalid(subject, "the config blob is not UTF-8 JSON");
  }
  if (!isMapping(value) || value.kiwi_artifact !== 1) throw invalid(subject, "the config blob is not a kiwi tool config (kiwi_artifact 1)");
  const str = (key: string): string => {
    const v = value[key];
    if (typeof v !== "string" || v === "") throw invalid(subject, `the config field ${key} is missing or not a string`);
    return v;
  };
  const files = toPlain(value.files ?? null);
  if (!Array.isArray(files)) throw invalid(subject, "the config has no files list");
  const entries: FileEntry[] = files.map((f, i) => {
    if (!isRecord(f) || typeof f.path !== "string" || typeof f.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(f.sha256) || typeof f.is_executable !== "boolean") {
      throw invalid(subject, `config file entry #${i} is malformed`);
    }
    const problem = toolPathProblem(f.path, "locked");
    if (problem) throw invalid(subject, `config file ${JSON.stringify(f.path)} ${problem}`);
    return { path: f.path, sha256: f.sha256, is_executable: f.is_executable };
  });
  if (new Set(entries.map((f) => f.path)).size !== entries.length) throw invalid(subject, "the config lists a file path twice");
  const manifestFile = str("manifest_file");
  if (toolPathProblem(manifestFile, "locked")) throw invalid(subject, `manifest_file ${JSON.stringify(manifestFile)} is not a clean relative path`);
  const manifestSha256 = str("manifest_sha256");
  if (!/^[0-9a-f]{64}$/.test(manifestSha256)) throw invalid(subject, "manifest_sha256 is not 64 lowercase hex digits");
  if (!manifest.layers.some((l) => l.digest === formatDigest(manifestSha256))) throw invalid(subject, `the manifest file ${manifestFile} has no layer`);
  const toolId = str("tool_id");
  if (/[/\\\0]/.test(toolId) || toolId.startsWith(".")) throw invalid(subject, `the tool id ${JSON.stringify(toolId)} cannot name a folder`);
  const version = str("version");
  const integrity = str("integrity");
  const recomputed = formatDigest(hashToolIntegrity({ tool_id: toolId, version, manifest: value.manifest ?? null, files: entries }).hex);
  if (recomputed !== integrity) throw invalid(subject, `the config's integrity ${integrity} does not match its own contents (${recomputed}): the config was tampered with`);
  const annotated = manifest.annotations?.[ANNOTATIONS.integrity];
  if (annotated !== integrity) throw invalid(subject, `the manifest annotation ${ANNOTATIONS.integrity} is ${annotated ?? "missing"}, the config says ${integrity}`);
  if (manifest.annotations?.[ANNOTATIONS.id] !== toolId) throw invalid(subject, `the manifest names the tool ${manifest.annotations?.[ANNOTATIONS.id] ?? "(none)"}, the config ${toolId}`);
  const layerDigests = new Set(manifest.layers.map((l) => l.digest));
  for (const f of entries) if (!layerDigests.has(formatDigest(f.sha256))) throw invalid(subject, `file ${f.path} (sha256:${f.sha256.slice(0, 12)}) has no layer`);
  const deps = toPlain(value.dependencies ?? []);
  if (!Array.isArray(deps) || deps.some((d) => !isRecord(d) || typeof d.tool_id !== "string" || typeof d.version !== "string" || typeof d.integrity !== "string")) {
    throw invalid(subject, "the config's dependencies are malformed");
  }
  return {
    kiwi_artifact: 1,
    tool_id: toolId,
    version,
    type: str("type"),
    integrity,
    manifest_digest: str("manifest_digest"),
    manifest_file: manifestFile,
    manifest_sha256: manifestSha256,
    manifest: value.manifest ?? null,
    files: entries,
    dependencies: deps as Dependency[],
    ...(value.mcp_pin !== undefined ? { mcp_pin: value.mcp_pin } : {}),
  };
}

/**
 * Every file a consumer places for the tool: its files plus the manifest file, which the
 * integrity covers as a parsed value rather than as a file entry.
 */
export function placedFiles(config: Pick<ToolConfig, "files" | "manifest_file" | "manifest_sha256">): FileEntry[] {
  if (config.files.some((f) => f.path === config.manifest_file)) return config.files;
  return [...config.files, { path: config.manifest_file, sha256: config.manifest_sha256, is_executable: false }];
}
