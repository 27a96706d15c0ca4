// The official MCP registry's server.json (schema 2025-12-11) -> one kiwi mcp_server manifest.
// Refuses what the registry refuses (ranges, `latest`, unknown registry types) and what kiwi
// cannot pin or run, naming the field. Pure: a parsed value in, a manifest value out.
import { KiwiError } from "../errors.ts";
import { isRecord } from "../integrity/value.ts";
import { isExactVersion } from "../deps/requirements.ts";
import { TOOL_ID } from "../schema/vocabulary.ts";
import { child, importError } from "./import-errors.ts";
import { envNameOf } from "../schema/placeholders.ts";
import { type InputScope, escapeLiteral, mapArguments, mapKeyValues, resolveTemplate } from "./inputs.ts";

/** The schema revision kiwi reads; later revisions are read as this one, with a note. */
export const SERVER_JSON_SCHEMA = "2025-12-11";

/** Registry types the registry accepts, and the ones kiwi can pin and run. */
export const REGISTRY_TYPES = ["npm", "pypi", "oci", "nuget", "mcpb"] as const;
const RUNNABLE = ["npm", "pypi", "mcpb"] as const;
type Runnable = (typeof RUNNABLE)[number];
/** The transports a package may declare; kiwi starts a package's server and speaks to it over stdio only. */
const PACKAGE_TRANSPORTS = ["stdio", "streamable-http", "sse"] as const;

export interface ServerJsonImportOptions {
  /** The tool id to write (default: the part of `name` after the slash, made a valid id). */
  id?: string;
  /** Which entry to import: a registry type (`npm`, `pypi`, `mcpb`) or `remote`; default: the first kiwi can run. */
  pick?: string;
}

/** What an MCPB package entry asks the caller to fetch and unpack before the manifest is complete. */
export interface McpbFetch {
  url: string;
  sha256: string;
  pointer: string;
}

export interface ServerJsonImport {
  id: string;
  /** The registry name and version it came from. */
  server: { name: string; version: string };
  /** `npm:<name>@<version>`, `pypi:<name>==<version>`, `mcpb:<url>` or the remote URL. */
  source: string;
  kind: Runnable | "remote";
  /** The kiwi manifest (for an MCPB package, completed from the bundle's manifest by the caller). */
  manifest: Record<string, unknown>;
  /** Set for an MCPB package: the bundle to download and check against fileSha256. */
  mcpb?: McpbFetch;
  /** What could not be carried over, said once each (printed as warnings). */
  notes: string[];
}

const SNAKE_CASE = ["version_detail", "registry_type", "package_arguments", "environment_variables", "runtime_arguments", "transport_type"];
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
// PEP 440 public and local versions: what `==` pins exactly.
const PEP440 = /^(?:\d+!)?\d+(?:\.\d+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?(?:[-_.]?(?:post|rev|r)[-_.]?\d*)?(?:[-_.]?dev[-_.]?\d*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$/i;

/** Maps a parsed server.json to a kiwi mcp_server manifest. Throws E_INPUT_INVALID naming the field. */
export function importServerJson(doc: unknown, file: string, options: ServerJsonImportOptions = {}): ServerJsonImport {
  if (isRecord(doc) && doc.name === undefined && isRecord(doc.server)) return importServerResponse(doc.server, file, options);
  return importServerDoc(doc, file, options);
}

/**
 * The registry API's answer for one version (GET /v0/servers/<name>/versions/<version>) wraps the
 * server.json as { server, _meta }: the server is read as a server.json, and every field named
 * (in errors and notes) is a pointer into the file as saved, below /server.
 */
function importServerResponse(server: Record<string, unknown>, file: string, options: ServerJsonImportOptions): ServerJsonImport {
  const rebase = (text: string) => (text.startsWith("/") ? `/server${text}` : text);
  try {
    const imported = importServerDoc(server, file, options);
    return { ...imported, notes: imported.notes.map(rebase), ...(imported.mcpb ? { mcpb: { ...imported.mcpb, pointer: `/server${imported.mcpb.pointer}` } } : {}) };
  } catch (error) {
    if (!(error instanceof KiwiError) || error.code !== "E_INPUT_INVALID") throw error;
    const inner = String((error.details as { field?: string } | undefined)?.field ?? "");
    const prefix = `${inner === "" ? file : `${file} at ${inner}`}: `;
    throw importError(file, `/server${inner}`, error.message.slice(prefix.length), error.hint ?? "");
  }
}

function importServerDoc(doc: unknown, file: string, options: ServerJsonImportOptions): ServerJsonImport {
  if (!isRecord(doc)) throw importError(file, "", "a server.json is a JSON object", "export it from the registry (GET /v0/servers/<name>/versions/<version>) or write it with mcp-publisher init");
  const old = findSnakeCase(doc, "");
  if (old) throw importError(file, old, "this is the pre-2025-09 snake_case server.json", `re-publish or convert it to the ${SERVER_JSON_SCHEMA} schema (camelCase: registryType, packageArguments, environmentVariables)`);
  const notes: string[] = [];
  const schema = doc.$schema;
  if (typeof schema === "string") {
    const date = /\/schemas\/(\d{4}-\d{2}-\d{2})\//.exec(schema)?.[1];
    if (date && date > SERVER_JSON_SCHEMA) notes.push(`${file} uses schema ${date}; kiwi reads ${SERVER_JSON_SCHEMA} and ignores fields it does not know`);
  }
  const name = requireString(doc, "name", "", file, "the registry name, e.g. io.github.owner/server");
  if (!/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/.test(name)) throw importError(file, "/name", `${JSON.stringify(name)} is not a registry name (reverse-DNS namespace, one slash, server name)`, "write it as io.github.owner/server");
  const version = requireString(doc, "version", "", file, "the server's version, e.g. 1.0.2");
  if (isRange(version)) throw importError(file, "/version", `${JSON.stringify(version)} is a version range`, "the registry takes one specific version (1.0.2), never a range or latest");
  const id = toolIdOf(name, options.id, file);
  const description = typeof doc.description === "string" ? doc.description : undefined;

  const packages = optionalArray(doc, "packages", file);
  const remotes = optionalArray(doc, "remotes", file);
  packages.forEach((p, i) => checkPackage(p, child("/packages", i), file));
  remotes.forEach((r, i) => checkRemote(r, child("/remotes", i), file));
  if (packages.length === 0 && remotes.length === 0) throw importError(file, "", "the server has neither packages nor remotes", "add a packages[] entry (npm, pypi, mcpb) or a remotes[] entry (streamable-http, sse)");

  const chosen = pickEntry(packages as Record<string, unknown>[], remotes as Record<string, unknown>[], options.pick, file);
  const base = { tool_id: id, tool_type: "mcp_server", version: semverOr(version, file), ...(description ? { description } : {}) };
  const scope: InputScope = { secrets: new Set(), notes, file };
  if (chosen.kind === "remote") {
    const remote = remotes[chosen.index] as Record<string, unknown>;
    return { id, server: { name, version }, source: String(remote.url), kind: "remote", manifest: remoteManifest(base, remote, child("/remotes", chosen.index), scope), notes };
  }
  const pkg = packages[chosen.index] as Record<string, unknown>;
  const pointer = child("/packages", chosen.index);
  const registryType = pkg.registryType as Runnable;
  const identifier = pkg.identifier as string;
  const pkgVersion = pkg.version as string;
  if (typeof pkg.registryBaseUrl === "string") {
    const official = registryType === "npm" ? /^https:\/\/registry\.npmjs\.org\/?$/ : registryType === "pypi" ? /^https:\/\/pypi\.org\/?$/ : undefined;
    if (official && !official.test(pkg.registryBaseUrl)) notes.push(`${pointer}/registryBaseUrl is ${pkg.registryBaseUrl}: kiwi installs from your ${registryType === "npm" ? "npm settings (.npmrc, npm_config_registry)" : "pip settings (PIP_INDEX_URL, pip.conf)"}, so point them there`);
  }
  const runtime = optionalArray(pkg, "runtimeArguments", file, pointer);
  if (runtime.length > 0) notes.push(`${pointer}/runtimeArguments (${runtime.length}) are for ${typeof pkg.runtimeHint === "string" ? pkg.runtimeHint : "the package launcher"}, which kiwi does not use: it runs the package from its locked, installed copy`);
  const args = mapArguments(optionalArray(pkg, "packageArguments", file, pointer), child(pointer, "packageArguments"), scope);
  const env = mapKeyValues(optionalArray(pkg, "environmentVariables", file, pointer), child(pointer, "environmentVariables"), scope, (n) => n);
  const config: Record<string, unknown> = { transport: "stdio" };
  let source: string;
  let mcpb: McpbFetch | undefined;
  if (registryType === "mcpb") {
    source = `mcpb:${identifier}`;
    mcpb = { url: identifier, sha256: pkg.fileSha256 as string, pointer };
  } else {
    source = registryType === "npm" ? `npm:${identifier}@${pkgVersion}` : `pypi:${identifier}==${pkgVersion}`;
    config.package = source;
  }
  if (args.length > 0) config.args = args;
  if (Object.keys(env).length > 0) config.env = env;
  if (scope.secrets.size > 0) config.secrets = [...scope.secrets].sort();
  const manifest = { ...base, executor: "subprocess", config };
  return { id, server: { name, version }, source, kind: registryType, manifest, ...(mcpb ? { mcpb } : {}), notes };
}

function remoteManifest(base: Record<string, unknown>, remote: Record<string, unknown>, pointer: string, scope: InputScope): Record<string, unknown> {
  const variables = isRecord(remote.variables) ? remote.variables : undefined;
  const url = resolveTemplate(remote.url as string, variables, child(pointer, "url"), scope, "url");
  const host = hostOf(url);
  if (host === undefined) {
    throw importError(scope.file, child(pointer, "url"), `the URL's host comes from a variable with no value or default (${remote.url as string})`, "kiwi declares the host the server may be reached at: give the variable a default, or write the URL into the manifest yourself");
  }
  const headers = mapKeyValues(optionalArray(remote, "headers", scope.file, pointer), child(pointer, "headers"), scope, envNameOf);
  const config: Record<string, unknown> = { transport: remote.type, url };
  if (Object.keys(headers).length > 0) config.headers = headers;
  if (scope.secrets.size > 0) config.secrets = [...scope.secrets].sort();
  return { ...base, executor: "http_client", config, requires: [{ "net.outbound": [host] }] };
}

/** The host (with a port when the URL names one) of an expanded URL, or undefined if it is not literal. */
function hostOf(url: string): string | undefined {
  const authority = /^https?:\/\/([^/?#]*)/.exec(url)?.[1];
  if (authority === undefined || authority.includes("${") || authority.includes("{")) return undefined;
  try {
    const parsed = new URL(url.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/g, "x"));
    return parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname;
  } catch {
    return undefined;
  }
}

function checkPackage(pkg: unknown, pointer: string, file: string): void {
  if (!isRecord(pkg)) throw importError(file, pointer, "a package entry is an object", "write { registryType, identifier, version, transport }");
  const registryType = requireString(pkg, "registryType", pointer, file, `one of ${REGISTRY_TYPES.join(", ")}`);
  if (!(REGISTRY_TYPES as readonly string[]).includes(registryType)) {
    throw importError(file, child(pointer, "registryType"), `unknown registryType ${JSON.stringify(registryType)}`, `the registry takes ${REGISTRY_TYPES.join(", ")}`);
  }
  const identifier = requireString(pkg, "identifier", pointer, file, registryType === "mcpb" ? "the https URL of the .mcpb file" : "the package name");
  const version = pkg.version;
  if (version !== undefined && typeof version !== "string") throw importError(file, child(pointer, "version"), "version is not a string", 'quote it: "1.0.2"');
  if (typeof version === "string") {
    if (version === "latest") throw importError(file, child(pointer, "version"), 'version "latest" floats', "the registry refuses latest: name one version (1.0.2)");
    if (version === "" || isRange(version)) throw importError(file, child(pointer, "version"), `${JSON.stringify(version)} is a version range, not one version`, "the registry refuses ranges (^1.2.3, ~1.2.3, >=1.2.3, 1.x, 1.*): name one version");
  }
  if (pkg.fileSha256 !== undefined && (typeof pkg.fileSha256 !== "string" || !/^[a-f0-9]{64}$/.test(pkg.fileSha256))) {
    throw importError(file, child(pointer, "fileSha256"), "fileSha256 is not 64 lower-case hex digits", "write the SHA-256 of the package file (sha256sum <file>)");
  }
  const transport = pkg.transport;
  if (!isRecord(transport) || typeof transport.type !== "string") throw importError(file, child(pointer, "transport"), "transport is missing or has no type", 'write "transport": { "type": "stdio" }');
  if (!(PACKAGE_TRANSPORTS as readonly string[]).includes(transport.type)) throw importError(file, child(child(pointer, "transport"), "type"), `transport type ${JSON.stringify(transport.type)} is not stdio, streamable-http or sse`, "a package's transport is stdio, streamable-http or sse");
  if (registryType === "npm") {
    if (!NPM_NAME.test(identifier) || identifier.length > 214) throw importError(file, child(pointer, "identifier"), `${JSON.stringify(identifier)} is not an npm package name`, "npm names are lower case, URL-safe, optionally @scope/name");
    if (version === undefined) throw importError(file, pointer, "the npm package names no version", "add \"version\": the exact version to install (kiwi pins the package by it)");
    if (!isExactVersion(version as string)) throw importError(file, child(pointer, "version"), `${JSON.stringify(version)} is not an exact semver version`, "npm packages are pinned by MAJOR.MINOR.PATCH (1.0.2)");
  } else if (registryType === "pypi") {
    if (!PYPI_NAME.test(identifier)) throw importError(file, child(pointer, "identifier"), `${JSON.stringify(identifier)} is not a PyPI project name`, "write the distribution's name (mcp-server-fetch)");
    if (version === undefined) throw importError(file, pointer, "the PyPI package names no version", "add \"version\": the exact version to install (kiwi pins it with ==)");
    if (!PEP440.test(version as string)) throw importError(file, child(pointer, "version"), `${JSON.stringify(version)} is not a PEP 440 version`, "write one release, e.g. 2025.4.7 or 1.0.0rc1");
  } else if (registryType === "mcpb") {
    if ((!/^https:\/\//.test(identifier) && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(identifier)) || !/^[^\s\u0000-\u001f\u007f]+$/.test(identifier)) throw importError(file, child(pointer, "identifier"), `${JSON.stringify(identifier)} is not an https URL`, "an MCPB package's identifier is the download URL of the .mcpb file");
    if (pkg.fileSha256 === undefined) throw importError(file, pointer, "the MCPB package has no fileSha256", "the registry requires the SHA-256 of the .mcpb file for MCPB packages: add fileSha256");
  }
}

function checkRemote(remote: unknown, pointer: string, file: string): void {
  if (!isRecord(remote)) throw importError(file, pointer, "a remote entry is an object", 'write { "type": "streamable-http", "url": "https://…" }');
  const type = requireString(remote, "type", pointer, file, "streamable-http or sse");
  if (type !== "streamable-http" && type !== "sse") throw importError(file, child(pointer, "type"), `remote type ${JSON.stringify(type)} is not streamable-http or sse`, "MCP remotes are streamable-http or sse");
  const url = requireString(remote, "url", pointer, file, "the server's https URL");
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw importError(file, child(pointer, "url"), `${JSON.stringify(url)} is not an http(s) URL`, "write the endpoint's full URL, https://host/mcp");
}

function pickEntry(packages: Record<string, unknown>[], remotes: Record<string, unknown>[], pick: string | undefined, file: string): { kind: "package" | "remote"; index: number } {
  const kinds = [...packages.map((p) => String(p.registryType)), ...(remotes.length > 0 ? ["remote"] : [])];
  if (pick === "remote") {
    if (remotes.length === 0) throw importError(file, "/remotes", "--pick remote, but the server has no remotes", `pick one of: ${kinds.join(", ")}`);
    return { kind: "remote", index: 0 };
  }
  if (pick !== undefined) {
    const index = packages.findIndex((p) => p.registryType === pick);
    if (index === -1) throw importError(file, "/packages", `--pick ${pick}, but the server has no ${pick} package`, `pick one of: ${[...new Set(kinds)].join(", ")}`);
    if (!(RUNNABLE as readonly string[]).includes(pick)) throw unrunnable(file, child("/packages", index), pick);
    const stdio = packages.findIndex((p) => p.registryType === pick && overStdio(p));
    if (stdio === -1) throw notStdio(file, child("/packages", index), packages[index]!);
    return { kind: "package", index: stdio };
  }
  const index = packages.findIndex((p) => (RUNNABLE as readonly string[]).includes(String(p.registryType)) && overStdio(p));
  if (index !== -1) return { kind: "package", index };
  if (remotes.length > 0) return { kind: "remote", index: 0 };
  const runnable = packages.findIndex((p) => (RUNNABLE as readonly string[]).includes(String(p.registryType)));
  if (runnable !== -1) throw notStdio(file, child("/packages", runnable), packages[runnable]!);
  throw unrunnable(file, child("/packages", 0), String(packages[0]!.registryType));
}

/** A package kiwi can start: its server speaks MCP on stdin and stdout. */
function overStdio(pkg: Record<string, unknown>): boolean {
  return isRecord(pkg.transport) && pkg.transport.type === "stdio";
}

function notStdio(file: string, pointer: string, pkg: Record<string, unknown>) {
  const type = isRecord(pkg.transport) ? String(pkg.transport.type) : "";
  return importError(file, child(child(pointer, "transport"), "type"), `the package's server listens on ${type} once started; kiwi starts a package's server over stdio only`, "import a remote of the server (--pick remote) if it has one, or ask the publisher for a stdio package");
}

function unrunnable(file: string, pointer: string, registryType: string) {
  return importError(file, child(pointer, "registryType"), `kiwi cannot pin and run ${registryType} packages`, "kiwi runs npm, pypi and mcpb packages and remotes (streamable-http, sse); ask the publisher for one of those");
}

/** True for what the registry calls a version range (or a floating tag). */
function isRange(version: string): boolean {
  return version === "latest" || /[\^~<>=*|]|\s|(?:^|\.)[xX](?:\.|$)/.test(version);
}

function semverOr(version: string, file: string): string {
  if (/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(version)) return version;
  throw importError(file, "/version", `${JSON.stringify(version)} is not a semantic version, which a kiwi tool's version must be`, "the registry recommends MAJOR.MINOR.PATCH: ask the publisher, or import a copy with the version corrected");
}

function toolIdOf(name: string, given: string | undefined, file: string): string {
  if (given !== undefined) {
    if (!TOOL_ID.test(given)) throw importError(file, "/name", `--id ${JSON.stringify(given)} is not a tool id`, "tool ids are lower case letters, digits, - and _, starting with a letter (at most 64)");
    return given;
  }
  let id = name.slice(name.indexOf("/") + 1).toLowerCase().replace(/[^a-z0-9_-]+/g, "_").replace(/^[^a-z]+/, "").slice(0, 64);
  if (!TOOL_ID.test(id)) id = "";
  if (id === "") throw importError(file, "/name", `no tool id can be made from ${JSON.stringify(name)}`, "pass --id <tool_id>");
  return id;
}

function findSnakeCase(value: unknown, pointer: string): string | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findSnakeCase(value[i], child(pointer, i));
      if (found) return found;
    }
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === "_meta") continue;
      if (SNAKE_CASE.includes(k)) return child(pointer, k);
      const found = findSnakeCase(v, child(pointer, k));
      if (found) return found;
    }
  }
  return undefined;
}

function requireString(obj: Record<string, unknown>, key: string, pointer: string, file: string, what: string): string {
  const value = obj[key];
  if (typeof value !== "string" || value === "") throw importError(file, value === undefined ? pointer : child(pointer, key), value === undefined ? `${key} is missing` : `${key} is not a non-empty string`, `add "${key}": ${what}`);
  return value;
}

function optionalArray(obj: Record<string, unknown>, key: string, file: string, pointer = ""): unknown[] {
  const value = obj[key];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw importError(file, child(pointer, key), `${key} is not an array`, `write "${key}": [ … ]`);
  return value;
}

