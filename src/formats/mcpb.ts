// MCP Bundles (.mcpb, manifest_version 0.1-0.4; github.com/anthropics/mcpb): the signature block the
// mcpb CLI appends (MCPB_SIG_V1, u32 LE length, DER PKCS#7, MCPB_SIG_END) and manifest.json mapped
// to a kiwi mcp_server whose files are the bundle's. Pure.
import { isRecord } from "../integrity/value.ts";
import { TOOL_ID } from "../schema/vocabulary.ts";
import { envNameOf } from "../schema/placeholders.ts";
import { child, importError } from "./import-errors.ts";
import { escapeLiteral } from "./inputs.ts";
import type { SignatureStatus } from "./pkcs7.ts";

/** What a bundle's signature block says, once verified. */
export interface BundleSignature {
  status: SignatureStatus | "unsigned";
  /** The signer's subject and issuer, and its certificate's SHA-256 fingerprint. */
  publisher?: string;
  issuer?: string;
  fingerprint?: string;
}

/** One line: unsigned, or the status with who signed and with which certificate. */
export function describeSignature(s: BundleSignature): string {
  return s.status === "unsigned" ? "unsigned" : `${s.status} by ${s.publisher} (issuer ${s.issuer}, sha256 ${s.fingerprint})`;
}

const HEADER = new TextEncoder().encode("MCPB_SIG_V1");
const FOOTER = new TextEncoder().encode("MCPB_SIG_END");
/** manifest_version values kiwi reads (dxt_version is the deprecated spelling). */
export const MCPB_VERSIONS = ["0.1", "0.2", "0.3", "0.4"];

/** The zip and, when the bundle is signed, the DER signature; throws when a block is present but malformed. */
export function splitSignature(bytes: Uint8Array, file: string): { zip: Uint8Array; signature?: Uint8Array } {
  if (!endsWith(bytes, FOOTER)) return { zip: bytes };
  const footerAt = bytes.length - FOOTER.length;
  for (let at = footerAt - HEADER.length - 4; at >= 0; at--) {
    if (!HEADER.every((b, i) => bytes[at + i] === b)) continue;
    const lengthAt = at + HEADER.length;
    const length = bytes[lengthAt]! | (bytes[lengthAt + 1]! << 8) | (bytes[lengthAt + 2]! << 16) | (bytes[lengthAt + 3]! * 0x1000000);
    if (lengthAt + 4 + length !== footerAt) break;
    return { zip: bytes.subarray(0, at), signature: bytes.subarray(lengthAt + 4, footerAt) };
  }
  throw importError(file, "", "the bundle ends with MCPB_SIG_END but its signature block is malformed (no MCPB_SIG_V1 header with a matching length)", "re-sign it with mcpb sign, or remove the block with mcpb unsign");
}

function endsWith(bytes: Uint8Array, suffix: Uint8Array): boolean {
  if (bytes.length < suffix.length) return false;
  const at = bytes.length - suffix.length;
  return suffix.every((b, i) => bytes[at + i] === b);
}

export interface McpbImport {
  id: string;
  version: string;
  /** The kiwi manifest to write as tool.yaml beside the bundle's files. */
  manifest: Record<string, unknown>;
  /** The bundle's entry point, made executable for a binary server. */
  entryPoint: string;
  binary: boolean;
  notes: string[];
}

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
/** MCPB's own path variables, for the host they run on. */
const HOST_PATHS: Record<string, string> = { HOME: "${HOME}", DESKTOP: "${HOME}/Desktop", DOCUMENTS: "${HOME}/Documents", DOWNLOADS: "${HOME}/Downloads", "/": "/", pathSeparator: "/" };

/**
 * Maps a bundle's manifest.json to a kiwi manifest. `${__dirname}` is the bundle folder, which is
 * the server's working directory in kiwi (its run directory), so it becomes `.`; `${user_config.x}`
 * becomes its default, or `${X}` read from the environment (secret when `sensitive`).
 */
export function importMcpbManifest(doc: unknown, file: string, options: { id?: string; platform: string }): McpbImport {
  const at = `${file}!manifest.json`;
  if (!isRecord(doc)) throw importError(at, "", "manifest.json is not a JSON object", "pack the bundle with mcpb pack");
  const version = doc.manifest_version ?? doc.dxt_version;
  if (typeof version !== "string") throw importError(at, "/manifest_version", "manifest_version is missing", `set manifest_version to one of ${MCPB_VERSIONS.join(", ")}`);
  if (!MCPB_VERSIONS.includes(version)) throw importError(at, doc.manifest_version !== undefined ? "/manifest_version" : "/dxt_version", `manifest_version ${JSON.stringify(version)} is not one kiwi reads (${MCPB_VERSIONS.join(", ")})`, "repack the bundle with an mcpb CLI of the 0.x line");
  for (const key of ["name", "version", "description"]) if (typeof doc[key] !== "string" || doc[key] === "") throw importError(at, `/${key}`, `${key} is missing`, `add "${key}"`);
  const name = doc.name as string;
  if (options.id !== undefined && !TOOL_ID.test(options.id)) throw importError(at, "/name", `--id ${JSON.stringify(options.id)} is not a tool id`, "tool ids are lower case letters, digits, - and _, starting with a letter (at most 64)");
  const id = options.id ?? name.toLowerCase().replace(/[^a-z0-9_-]+/g, "_").replace(/^[^a-z]+/, "").slice(0, 64);
  if (!TOOL_ID.test(id)) throw importError(at, "/name", `no tool id can be made from ${JSON.stringify(name)}`, "pass --id <tool_id>");
  if (!SEMVER.test(doc.version as string)) throw importError(at, "/version", `version ${JSON.stringify(doc.version)} is not a semantic version`, "bundles use MAJOR.MINOR.PATCH");
  // The host installs a bundle only on a platform it lists (compatibility.platforms: darwin, win32, linux).
  const platforms = isRecord(doc.compatibility) ? doc.compatibility.platforms : undefined;
  if (Array.isArray(platforms) && platforms.length > 0 && !platforms.includes(options.platform)) {
    throw importError(at, "/compatibility/platforms", `the bundle supports ${platforms.map(String).join(", ")}, not ${options.platform}`, "import it on a platform it supports, or ask the publisher for a build for this one");
  }
  const server = doc.server;
  if (!isRecord(server)) throw importError(at, "/server", "server is missing", "describe the server: { type, entry_point, mcp_config }");
  if (!["node", "python", "binary", "uv"].includes(String(server.type))) throw importError(at, "/server/type", server.type === undefined ? "server.type is missing" : `server type ${JSON.stringify(server.type)} is not node, python, binary or uv`, "set server.type to node, python, binary or uv");
  if (typeof server.entry_point !== "string" || server.entry_point === "" || leaves(server.entry_point)) throw importError(at, "/server/entry_point", "entry_point is missing or leaves the bundle", "name the server's file inside the bundle");
  const notes: string[] = [];
  const given = server.mcp_config;
  if (!isRecord(given)) {
    throw importError(at, "/server/mcp_config", server.type === "uv" ? "a uv server without mcp_config is started by uv, which resolves and downloads packages when it starts" : "mcp_config is missing", server.type === "uv" ? "kiwi runs only what it locked: give the bundle an mcp_config (command, args) that runs its bundled code" : "add mcp_config: { command, args, env }");
  }
  let mcp: Record<string, unknown> = given;
  const override = isRecord(mcp.platform_overrides) ? mcp.platform_overrides[options.platform] : undefined;
  if (isRecord(override)) {
    // As the mcpb host does (getMcpConfigForManifest): command and args replace the base's, env adds to it.
    mcp = { ...mcp, command: override.command || mcp.command, args: override.args || mcp.args, env: isRecord(override.env) && isRecord(mcp.env) ? { ...mcp.env, ...override.env } : (override.env ?? mcp.env) };
    notes.push(`used server.mcp_config.platform_overrides.${options.platform}: the tool is written for this platform`);
  }
  if (typeof mcp.command !== "string" || mcp.command === "") throw importError(at, "/server/mcp_config/command", "command is missing", "name the program that starts the server");
  const userConfig = isRecord(doc.user_config) ? doc.user_config : {};
  const secrets = new Set<string>();
  // `via`: the options whose defaults are being expanded, so a default that names itself is refused, not followed forever.
  const expand = (text: string, pointer: string, via: readonly string[] = []): string =>
    escapeLiteral(text).replace(/\$\{\{?([^{}]+)\}?\}/g, (whole, name: string) => {
      if (name === "__dirname") return ".";
      if (Object.hasOwn(HOST_PATHS, name)) return HOST_PATHS[name]!;
      const m = /^user_config\.(.+)$/.exec(name);
      if (!m) return whole;
      const option = Object.hasOwn(userConfig, m[1]!) ? userConfig[m[1]!] : undefined;
      if (!isRecord(option)) throw importError(at, pointer, `${whole} names no user_config option`, `declare user_config.${m[1]} or fix the reference`);
      if (via.includes(m[1]!)) throw importError(at, pointer, `the default of user_config.${m[1]} refers to itself (${[...via, m[1]!].join(" -> ")})`, "give the option a default that does not name it");
      const envName = envNameOf(m[1]!);
      if (option.sensitive === true) {
        secrets.add(envName);
        return `\${${envName}}`;
      }
      const defaultAt = child(child("/user_config", m[1]!), "default");
      if (Array.isArray(option.default)) return option.default.map((v, j) => expand(String(v), child(defaultAt, j), [...via, m[1]!])).join(",");
      if (option.default !== undefined) return expand(String(option.default), defaultAt, [...via, m[1]!]);
      if (option.required === true) return `\${${envName}}`;
      notes.push(`user_config.${m[1]} is optional and has no default: it is passed as an empty string; set it in the manifest if the server needs it`);
      return "";
    });
  const args = mcp.args === undefined ? [] : mcp.args;
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string")) throw importError(at, "/server/mcp_config/args", "args is not an array of strings", 'write "args": ["…"]');
  const env = mcp.env === undefined ? {} : mcp.env;
  if (!isRecord(env) || Object.values(env).some((v) => typeof v !== "string")) throw importError(at, "/server/mcp_config/env", "env is not an object of strings", 'write "env": { "NAME": "value" }');
  const config: Record<string, unknown> = { transport: "stdio", command: expand(mcp.command as string, "/server/mcp_config/command") };
  const mappedArgs = (args as string[]).flatMap((a, i) => {
    // An argument that is exactly a multiple-valued option becomes one argument per value (MANIFEST.md, "Array Expansion").
    const option = /^\$\{user_config\.([^}]+)\}$/.exec(a)?.[1];
    const chosen = option === undefined || !Object.hasOwn(userConfig, option) ? undefined : userConfig[option];
    if (isRecord(chosen) && chosen.sensitive !== true && Array.isArray(chosen.default)) {
      return chosen.default.map((v, j) => expand(String(v), child(child(child("/user_config", option!), "default"), j), [option!]));
    }
    return [expand(a, `/server/mcp_config/args/${i}`)];
  });
  if (mappedArgs.length > 0) config.args = mappedArgs;
  const mappedEnv = Object.fromEntries(Object.entries(env as Record<string, string>).map(([k, v]) => [k, expand(v, child("/server/mcp_config/env", k))]));
  if (Object.keys(mappedEnv).length > 0) config.env = mappedEnv;
  if (secrets.size > 0) config.secrets = [...secrets].sort();
  const manifest = { tool_id: id, tool_type: "mcp_server", version: doc.version, description: doc.description, executor: "subprocess", config };
  // The bundle's file as the zip names it: `./server/index.js` and `server//index.js` are server/index.js.
  const entryPoint = server.entry_point.split("/").filter((s) => s !== "" && s !== ".").join("/");
  return { id, version: doc.version as string, manifest, entryPoint, binary: server.type === "binary", notes };
}

function leaves(path: string): boolean {
  if (path.startsWith("/") || path.includes("\\") || path.includes("\0")) return true;
  let depth = 0;
  for (const s of path.split("/")) {
    depth += s === ".." ? -1 : s === "." || s === "" ? 0 : 1;
    if (depth < 0) return true;
  }
  return false;
}

/** A zip entry name that would land outside the folder it is unpacked into, or is not a plain path. */
export function unsafeEntryName(name: string): boolean {
  return name === "" || leaves(name) || /(^|\/)\.\.?(\/|$)/.test(name.replace(/\/$/, "")) || /^[A-Za-z]:/.test(name);
}

/**
 * The Unix mode of each entry a zip's central directory records (fflate does not expose it): for
 * executable bits and to refuse symbolic links. Entries made elsewhere than Unix have none.
 */
export function zipUnixModes(zip: Uint8Array): Map<string, number> {
  const modes = new Map<string, number>();
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // The end-of-central-directory record: within the last 64 KiB + 22 bytes (its comment is at most 65535).
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd === -1) return modes;
  const count = view.getUint16(eocd + 10, true);
  let at = view.getUint32(eocd + 16, true);
  const decoder = new TextDecoder();
  for (let n = 0; n < count && at + 46 <= zip.length && view.getUint32(at, true) === 0x02014b50; n++) {
    const madeBy = view.getUint16(at + 4, true) >> 8;
    const nameLength = view.getUint16(at + 28, true);
    const skip = nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    const external = view.getUint32(at + 38, true);
    if (madeBy === 3) modes.set(decoder.decode(zip.subarray(at + 46, at + 46 + nameLength)), external >>> 16);
    at += 46 + skip;
  }
  return modes;
}
