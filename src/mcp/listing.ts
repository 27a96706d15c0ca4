// The wire listing: what an MCP server says about itself (initialize + the list calls), kept
// losslessly (3 and 3.0 differ) because hashes are computed over it. Pure: text in, values out.
import { KiwiError } from "../errors.ts";
import { type CanonicalValue, isMapping } from "../integrity/value.ts";
import { parseJsonLossless } from "../integrity/json-lossless.ts";
import { ParseProblem } from "../integrity/parse-problem.ts";

/** A JSON object as the lossless parser yields it. */
export type WireObject = { [key: string]: CanonicalValue };

/**
 * The list kinds, with their wire key, list method, the capability that gates them and the field
 * that identifies an item. Skills (SEP-2640) are gated by `capabilities.extensions` instead.
 */
export const LIST_KINDS = [
  { key: "tools", method: "tools/list", capability: "tools", item: "tool", id: "name" },
  { key: "prompts", method: "prompts/list", capability: "prompts", item: "prompt", id: "name" },
  { key: "resources", method: "resources/list", capability: "resources", item: "resource", id: "uri" },
  { key: "resourceTemplates", method: "resources/templates/list", capability: "resources", item: "resource template", id: "uriTemplate" },
  { key: "skills", method: "skills/list", capability: "extensions", item: "skill", id: "uri" },
] as const;
export type ListKey = (typeof LIST_KINDS)[number]["key"];

/** The Skills extension's id in `capabilities.extensions` (SEP-2640). */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/**
 * Result fields of the 2026-07-28 revision that describe one answer, not the interface: cache
 * hints (`ttlMs`, `cacheScope`), the `resultType` every result carries, and `_meta`. They never
 * enter a pin or a hash, so two answers of an unchanged server always hash alike.
 */
export const VOLATILE_RESULT_FIELDS: ReadonlySet<string> = new Set(["ttlMs", "cacheScope", "resultType", "_meta"]);

/** A copy of a result object without its volatile fields (and without `nextCursor`). */
export function withoutVolatile(object: WireObject): WireObject {
  const out: WireObject = {};
  for (const key of Object.keys(object)) {
    if (VOLATILE_RESULT_FIELDS.has(key) || key === "nextCursor") continue;
    Object.defineProperty(out, key, { value: object[key], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * What of a discover result is interface: all but the volatile fields (ttlMs, cacheScope,
 * resultType, _meta), instructions (a component of its own) and serverInfo (the pin's name and
 * version). Applied when listing and again when hashing, whatever the listing's source.
 */
export function discoverComponent(discover: WireObject): WireObject {
  const out = withoutVolatile(discover);
  delete out.instructions;
  delete out.serverInfo;
  return out;
}

/** True when the capabilities advertise the list kind (skills: the Skills extension). */
export function advertises(capabilities: WireObject, kind: (typeof LIST_KINDS)[number]): boolean {
  const value = capabilities[kind.capability];
  if (value === undefined || value === null) return false;
  return kind.key !== "skills" || (isMapping(value) && value[SKILLS_EXTENSION] !== undefined && value[SKILLS_EXTENSION] !== null);
}

/**
 * A server's interface in MCP wire terms (shared/specs/mcp-interface.md §3). Everything but the
 * lists is optional; an offline listing file usually has only some of it.
 */
export interface WireListing {
  serverInfo?: WireObject;
  protocolVersion?: string;
  capabilities?: WireObject;
  instructions?: CanonicalValue;
  /**
   * A 2026-07-28 server's `server/discover` result without its volatile fields, `instructions`
   * (a component of its own) and `serverInfo` (compared by name, its version informational).
   */
  discover?: WireObject;
  tools: WireObject[];
  prompts: WireObject[];
  resources: WireObject[];
  resourceTemplates: WireObject[];
  /** Skill entries (SEP-2640 `skills/list`): `{uri, frontmatter, resources: [{uri, digest, size}]}`. */
  skills: WireObject[];
}

/** An empty listing (a server that advertises nothing). */
export function emptyListing(): WireListing {
  return { tools: [], prompts: [], resources: [], resourceTemplates: [], skills: [] };
}

/** Parses a wire listing file (§3 shape) losslessly; `source` names the file in errors. */
export function parseWireListing(text: string, source: string): WireListing {
  let value: CanonicalValue;
  try {
    value = parseJsonLossless(text, { positions: false }).value;
  } catch (error) {
    if (error instanceof ParseProblem) {
      throw new KiwiError("E_INPUT_INVALID", `${source} is not valid JSON: ${error.message} (offset ${error.offset})`, {
        hint: "a listing file is one JSON object with the MCP wire keys tools, prompts, resources, resourceTemplates, instructions",
      });
    }
    throw error;
  }
  assertListingKeys(value, source);
  return checkWireListing(value, source);
}

/** The keys of a wire listing file (§3), all optional; `_meta` is allowed and ignored, as on the wire. */
const LISTING_FILE_KEYS: ReadonlySet<string> = new Set(["serverInfo", "protocolVersion", "capabilities", "instructions", "discover", "_meta", ...LIST_KINDS.map((k) => k.key)]);

/**
 * A listing file with another key is refused rather than hashed without it: a saved JSON-RPC
 * response (`{"jsonrpc", "id", "result"}`), one page of a paginated list (`nextCursor`) or a
 * misspelt `tool` would otherwise hash as an interface it does not describe (often the empty one).
 */
function assertListingKeys(value: CanonicalValue, source: string): void {
  if (!isMapping(value)) return;
  const unknown = Object.keys(value).filter((key) => !LISTING_FILE_KEYS.has(key));
  if (unknown.length === 0) return;
  const key = unknown[0]!;
  const why =
    key === "jsonrpc" || key === "result" || key === "id"
      ? "this is a JSON-RPC message: save its result's keys (tools, prompts, …) as the listing, merging the results of initialize and each list"
      : key === "nextCursor"
        ? "this is one page of a paginated list: follow nextCursor and put every page's items in one list"
        : `a listing file has only the keys ${[...LISTING_FILE_KEYS].filter((k) => k !== "_meta").join(", ")}`;
  throw new KiwiError("E_INPUT_INVALID", `${source} at /${key.replace(/~/g, "~0").replace(/\//g, "~1")}: unknown key ${JSON.stringify(key)} in a wire listing`, {
    hint: why,
    details: { source, pointer: `/${key}`, unknown },
  });
}

/** Checks a parsed value has the listing shape and returns it typed; errors name the JSON pointer. */
export function checkWireListing(value: CanonicalValue, source: string): WireListing {
  if (!isMapping(value)) throw shapeError(source, "", "the listing must be a JSON object");
  const listing = emptyListing();
  for (const { key, item, id } of LIST_KINDS) {
    const list = value[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw shapeError(source, `/${key}`, `"${key}" must be an array`);
    list.forEach((entry, i) => {
      if (!isMapping(entry)) throw shapeError(source, `/${key}/${i}`, `each ${item} must be an object`);
      if (typeof entry[id] !== "string") throw shapeError(source, `/${key}/${i}/${id}`, `the ${item} has no string "${id}"`);
    });
    listing[key] = list as WireObject[];
  }
  if (value.discover !== undefined && value.discover !== null) {
    if (!isMapping(value.discover)) throw shapeError(source, "/discover", '"discover" must be an object');
    listing.discover = value.discover;
  }
  if (value.serverInfo !== undefined && value.serverInfo !== null) {
    if (!isMapping(value.serverInfo)) throw shapeError(source, "/serverInfo", '"serverInfo" must be an object');
    // MCP's Implementation: name and version are strings. Another type is no name kiwi can pin or
    // show (it would read as "unnamed"), so it is refused rather than silently dropped.
    for (const field of ["name", "version"] as const) {
      const v = value.serverInfo[field];
      if (v !== undefined && v !== null && typeof v !== "string") throw shapeError(source, `/serverInfo/${field}`, `"serverInfo.${field}" must be a string`);
    }
    listing.serverInfo = value.serverInfo;
  }
  if (value.capabilities !== undefined && value.capabilities !== null) {
    if (!isMapping(value.capabilities)) throw shapeError(source, "/capabilities", '"capabilities" must be an object');
    listing.capabilities = value.capabilities;
  }
  if (typeof value.protocolVersion === "string") listing.protocolVersion = value.protocolVersion;
  if (value.instructions !== undefined && value.instructions !== null) {
    if (typeof value.instructions !== "string") throw shapeError(source, "/instructions", '"instructions" must be a string');
    listing.instructions = value.instructions;
  }
  return listing;
}

/** The server's self-reported name, or undefined when it sent none. */
export function serverName(listing: WireListing): string | undefined {
  const name = listing.serverInfo?.name;
  return typeof name === "string" ? name : undefined;
}

/** The server's self-reported version, or undefined. */
export function serverVersion(listing: WireListing): string | undefined {
  const version = listing.serverInfo?.version;
  return typeof version === "string" ? version : undefined;
}


/** A copy of a wire object without its top-level `_meta` (never part of any hash). */
/**
 * A JSON-RPC message as the SDK may check it: in list results, a null `description` (of a tool,
 * prompt, prompt argument, resource or template) and a null resource `mimeType` are dropped. The
 * interface reads them as "" (the spec says so, the reference reads them through optional fields,
 * and `--listing` does too); the SDK's schema allows only a string or nothing, and would refuse a
 * live server that `--listing` accepts. kiwi takes the listing itself from the lossless capture,
 * so this copy only decides whether the SDK lets the answer through. Other messages are returned as is.
 */
export function nullDescriptionsDropped<T>(message: T): T {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  const result = isObject(message) ? message.result : undefined;
  if (!isObject(result)) return message;
  const withoutNull = (item: unknown, keys: readonly string[]): unknown => {
    if (!isObject(item) || !keys.some((k) => item[k] === null)) return item;
    const out = { ...item };
    for (const k of keys) if (out[k] === null) delete out[k];
    return out;
  };
  const fixItem = (item: unknown): unknown => {
    const fixed = withoutNull(item, ["description", "mimeType"]);
    if (!isObject(fixed) || !Array.isArray(fixed.arguments)) return fixed;
    const args = fixed.arguments.map((a) => withoutNull(a, ["description"]));
    return args.every((a, i) => a === (fixed.arguments as unknown[])[i]) ? fixed : { ...fixed, arguments: args };
  };
  let changed: Record<string, unknown> | undefined;
  for (const key of ["tools", "prompts", "resources", "resourceTemplates"]) {
    const list = result[key];
    if (!Array.isArray(list)) continue;
    const fixed = list.map(fixItem);
    if (fixed.every((item, i) => item === list[i])) continue;
    changed ??= { ...result };
    changed[key] = fixed;
  }
  return changed === undefined ? message : ({ ...(message as Record<string, unknown>), result: changed } as T);
}

export function withoutMeta(object: WireObject): WireObject {
  if (!Object.hasOwn(object, "_meta")) return object;
  const out: WireObject = {};
  for (const key of Object.keys(object)) if (key !== "_meta") Object.defineProperty(out, key, { value: object[key], enumerable: true, writable: true, configurable: true });
  return out;
}

function shapeError(source: string, pointer: string, message: string): KiwiError {
  return new KiwiError("E_INPUT_INVALID", `${source}${pointer ? ` at ${pointer}` : ""}: ${message}`, {
    hint: 'see "Wire listing file" in the MCP section of the README for the expected shape',
    details: { source, pointer },
  });
}
