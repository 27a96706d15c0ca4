// An .mcpb bundle placed as a kiwi tool: signature verified and classified, zip unpacked with
// every entry name and size checked, manifest.json mapped (mcpb.ts), the files and a tool.yaml
// moved into .ai/tools/<id>/ with one rename. The zip is read by fflate (Bun has no zip reader).
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { X509Certificate, createHash, randomBytes } from "node:crypto";
import { rootCertificates } from "node:tls";
import { dirname, join } from "node:path";
import { unzipSync } from "fflate";
import YAML from "yaml";
import { KiwiError } from "../errors.ts";
import { commentText, importError } from "./import-errors.ts";
import { type BundleSignature, describeSignature, importMcpbManifest, splitSignature, unsafeEntryName, zipUnixModes } from "./mcpb.ts";
import { Pkcs7Error, classifySigner, verifyDetachedSignature } from "./pkcs7.ts";

export type { BundleSignature };

/** Caps on what a bundle may unpack to (a zip bomb is refused before it fills the disk). */
export const MCPB_LIMITS = { files: 20_000, bytes: 512 * 1024 * 1024 };
const KIWI_MANIFESTS = ["tool.yaml", "tool.yml", "tool.json"];

export interface PlacedBundle {
  id: string;
  version: string;
  sha256: string;
  signature: BundleSignature;
  /** Absolute folder of the placed tool. */
  dir: string;
  files: number;
  notes: string[];
}

/** The certificates a signed bundle may chain to: Node's bundled roots and NODE_EXTRA_CA_CERTS, as Node's TLS trusts. */
export function trustedRoots(env: Readonly<Record<string, string | undefined>>): X509Certificate[] {
  const pems = [...rootCertificates];
  const extra = env.NODE_EXTRA_CA_CERTS;
  if (extra) {
    try {
      pems.push(...(readFileSync(extra, "utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []));
    } catch (error) {
      throw new KiwiError("E_IO", `NODE_EXTRA_CA_CERTS names ${extra}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? error})`, { hint: "point it at a PEM file of CA certificates, or unset it" });
    }
  }
  return pems.flatMap((pem) => {
    try {
      return [new X509Certificate(pem)];
    } catch {
      return [];
    }
  });
}

/** Verifies the appended signature block, if any. A block that does not verify is E_TRUST. */
export function checkBundleSignature(bytes: Uint8Array, file: string, env: Readonly<Record<string, string | undefined>>): { zip: Uint8Array; signature: BundleSignature } {
  const { zip, signature } = splitSignature(bytes, file);
  if (!signature) return { zip, signature: { status: "unsigned" } };
  let verdict;
  try {
    verdict = verifyDetachedSignature(signature, zip);
  } catch (error) {
    if (!(error instanceof Pkcs7Error)) throw error;
    throw new KiwiError("E_TRUST", `${file}: the bundle's signature does not verify: ${(error as Error).message}`, { hint: "do not use this bundle; ask its publisher for one signed with mcpb sign", details: { file } });
  }
  const one = (s: string) => s.replace(/\n/g, ", ");
  return { zip, signature: { status: classifySigner(verdict, trustedRoots(env)), publisher: one(verdict.signer.subject), issuer: one(verdict.signer.issuer), fingerprint: verdict.signer.fingerprint256.replace(/:/g, "").toLowerCase() } };
}

/** Unpacks, maps and places a bundle as `.ai/tools/<id>/`. The caller checks it and removes `dir` on failure. */
export function placeBundle(root: string, toolsDir: string, bytes: Uint8Array, file: string, options: { id?: string; env: Readonly<Record<string, string | undefined>>; takenIds: ReadonlySet<string> }): PlacedBundle {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const { zip, signature } = checkBundleSignature(bytes, file, options.env);
  const files = unzip(zip, file);
  const modes = zipUnixModes(zip);
  for (const [name, mode] of modes) {
    if ((mode & 0o170000) === 0o120000) throw importError(file, "", `the zip entry ${JSON.stringify(name)} is a symbolic link`, "a bundle carries files, not links: repack it with the files themselves");
  }
  const manifestBytes = files.get("manifest.json");
  if (!manifestBytes) throw importError(file, "", "the bundle has no manifest.json at its top", "an .mcpb is a zip with manifest.json at its root (mcpb pack writes it)");
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(manifestBytes));
  } catch (error) {
    throw importError(`${file}!manifest.json`, "", `invalid JSON: ${(error as Error).message}`, "fix manifest.json and repack the bundle");
  }
  const mapped = importMcpbManifest(doc, file, { id: options.id, platform: process.platform });
  if (!files.has(mapped.entryPoint)) throw importError(`${file}!manifest.json`, "/server/entry_point", `entry_point ${mapped.entryPoint} is not in the bundle`, "repack the bundle with its server files");
  const clash = KIWI_MANIFESTS.find((m) => files.has(m));
  if (clash) throw importError(file, "", `the bundle has its own ${clash} at its top, where kiwi writes the tool's manifest`, "rename that file in the bundle");
  const dir = join(toolsDir, mapped.id);
  if (options.takenIds.has(mapped.id) || existsSync(dir)) {
    throw new KiwiError("E_USAGE", `a tool named ${mapped.id} already exists`, { hint: "pass --id <another id>, or remove the existing tool first", details: { tool: mapped.id } });
  }
  const stage = join(root, ".ai", ".kiwi-tmp", `mcpb-${randomBytes(6).toString("hex")}`);
  try {
    for (const [name, data] of files) {
      const target = join(stage, ...name.split("/"));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, data);
      // Executable bits as the zip records them (a bundled shell script, a prebuilt binary).
      if (((modes.get(name) ?? 0) & 0o111) !== 0) chmodSync(target, 0o755);
    }
    if (mapped.binary) chmodSync(join(stage, ...mapped.entryPoint.split("/")), 0o755);
    const header = `# ${commentText(`Imported by kiwi add --from ${file.split("/").pop()}: MCP bundle ${mapped.id} ${mapped.version}, sha256 ${sha256}, ${describeSignature(signature)}`)}\n`;
    writeFileSync(join(stage, "tool.yaml"), header + YAML.stringify(mapped.manifest, { lineWidth: 0 }));
    mkdirSync(toolsDir, { recursive: true });
    renameSync(stage, dir);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  const notes = [...mapped.notes];
  if (signature.status === "untrusted") notes.push(`the signature verifies, but ${signature.publisher}'s certificate does not chain to a trusted root (add the CA to NODE_EXTRA_CA_CERTS to trust it)`);
  return { id: mapped.id, version: mapped.version, sha256, signature, dir, files: files.size, notes };
}

/** The bundle's files by name, each name and the totals checked before anything is written. */
function unzip(zip: Uint8Array, file: string): Map<string, Uint8Array> {
  const seen = new Set<string>();
  let total = 0;
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(zip, {
      filter(entry) {
        if (unsafeEntryName(entry.name)) throw importError(file, "", `the zip entry ${JSON.stringify(entry.name)} would land outside the bundle's folder`, "do not use this bundle: its paths are crafted to escape");
        if (seen.has(entry.name)) throw importError(file, "", `the zip holds ${entry.name} twice`, "repack the bundle with mcpb pack");
        seen.add(entry.name);
        total += entry.originalSize;
        if (seen.size > MCPB_LIMITS.files || total > MCPB_LIMITS.bytes) throw importError(file, "", `the bundle unpacks to more than ${MCPB_LIMITS.files} files or ${MCPB_LIMITS.bytes / 1024 / 1024} MiB`, "kiwi refuses bundles that large");
        return !entry.name.endsWith("/");
      },
    });
  } catch (error) {
    if (error instanceof KiwiError) throw error;
    throw importError(file, "", `the bundle is not a readable zip (${(error as Error).message})`, "an .mcpb is a zip archive; repack it with mcpb pack");
  }
  const out = new Map<string, Uint8Array>();
  for (const [name, data] of Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out.set(name, data);
  return out;
}
