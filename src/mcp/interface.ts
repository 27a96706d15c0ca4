// The two interface hashes of an MCP server (shared/specs/mcp-interface.md): the kiji-safeguard
// compatible interface hash (§1) and kiwi's full hash (§2). Pure: a wire listing in, digests out.
import { renderCanonicalJson } from "../integrity/canonical.ts";
import { sha256Hex } from "../integrity/digest.ts";
import { KiwiError } from "../errors.ts";
import { type CanonicalValue, Float, isMapping } from "../integrity/value.ts";
import { discoverComponent, type WireListing, type WireObject, withoutMeta } from "./listing.ts";

/** One component with its canonical text and that text's SHA-256. */
export interface HashedComponent {
  component: WireObject;
  canonical: string;
  sha256: string;
}

export interface InterfaceHashes {
  /** kiji-safeguard compatible (§1), lowercase hex. */
  interface_hash: string;
  /** kiwi's full hash (§2), lowercase hex. */
  full_hash: string;
  interface: HashedComponent[];
  full: HashedComponent[];
}

/** Both hashes of a listing, with the components they were computed over. */
export function hashInterface(listing: WireListing): InterfaceHashes {
  const iface = hashComponents(interfaceComponents(listing));
  const full = hashComponents(fullComponents(listing));
  return { interface_hash: iface.hash, full_hash: full.hash, interface: iface.components, full: full.components };
}

/**
 * Components → canonical JSON → SHA-256 each → hex digests sorted as strings (duplicates kept)
 * → concatenated → SHA-256. Listing order therefore never matters; no components hash like "".
 */
export function hashComponents(components: readonly WireObject[]): { hash: string; components: HashedComponent[] } {
  const hashed = components.map((component) => {
    const canonical = renderCanonicalJson(component);
    return { component, canonical, sha256: sha256Hex(canonical) };
  });
  // Hex digests are ASCII, so code-unit order is code-point order.
  const digests = hashed.map((c) => c.sha256).sort();
  return { hash: sha256Hex(digests.join("")), components: hashed };
}

/** §1 components, exactly per the spec's table (kiji-safeguard compatible). */
export function interfaceComponents(listing: WireListing): WireObject[] {
  const out: WireObject[] = [];
  for (const tool of listing.tools) {
    const component: WireObject = {
      type: "tool",
      name: tool.name ?? "",
      description: orEmptyString(tool.description),
      input_schema: isEmpty(tool.inputSchema) ? {} : tool.inputSchema!,
    };
    if (!isEmpty(tool.outputSchema)) component.output_schema = tool.outputSchema!;
    out.push(component);
  }
  for (const prompt of listing.prompts) {
    const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
    out.push({
      type: "prompt",
      name: prompt.name ?? "",
      description: orEmptyString(prompt.description),
      arguments: args.map((arg) => {
        const a: WireObject = isMapping(arg) ? arg : {};
        return { name: a.name ?? "", description: orEmptyString(a.description), required: requiredFlag(a.required, prompt.name, a.name) };
      }),
    });
  }
  for (const resource of listing.resources) {
    out.push({
      type: "resource",
      uri: normalizeUri(resource.uri),
      name: resource.name ?? "",
      description: orEmptyString(resource.description),
      mime_type: orEmptyString(resource.mimeType),
    });
  }
  if (typeof listing.instructions === "string" && listing.instructions !== "") {
    out.push({ type: "server_instructions", instructions: listing.instructions });
  }
  return out;
}

/**
 * A prompt argument's `required` as kiji-safeguard hashes it: the reference reads listings through
 * the Python SDK, whose pydantic models coerce `"true"`, `"yes"`, `1` and the like to a boolean
 * (lax mode) and reject what they cannot coerce. Missing or null is false.
 */
export function requiredFlag(value: CanonicalValue | undefined, prompt: CanonicalValue | undefined, argument: CanonicalValue | undefined): boolean {
  const coerced = laxBool(value);
  if (coerced !== undefined) return coerced;
  throw new KiwiError("E_MCP", `prompt ${JSON.stringify(String(prompt ?? ""))} argument ${JSON.stringify(String(argument ?? ""))} has required: ${renderCanonicalJson(value!)}, which is not a boolean`, {
    hint: "the reference client (the Python MCP SDK) rejects this listing too; the server must send true or false",
    details: { prompt: String(prompt ?? ""), argument: String(argument ?? "") },
  });
}

const LAX_TRUE = new Set(["1", "t", "y", "on", "yes", "true"]);
const LAX_FALSE = new Set(["0", "f", "n", "no", "off", "false"]);

/** pydantic v2's lax bool: booleans, 0/1 (integer or float), and its true/false words in any case. */
function laxBool(value: CanonicalValue | undefined): boolean | undefined {
  if (value === undefined || value === null) return false;
  if (typeof value === "boolean") return value;
  const n = value instanceof Float ? value.value : typeof value === "bigint" ? Number(value) : typeof value === "number" ? value : undefined;
  if (n !== undefined) return n === 1 ? true : n === 0 ? false : undefined;
  if (typeof value === "string") {
    // pydantic compares ignoring ASCII case only.
    const word = value.replace(/[A-Z]/g, (c) => c.toLowerCase());
    return LAX_TRUE.has(word) ? true : LAX_FALSE.has(word) ? false : undefined;
  }
  return undefined;
}

/** The `type` of each §2 component and the key its wire object sits under. */
export const FULL_COMPONENT_KINDS = {
  tools: "tool",
  prompts: "prompt",
  resources: "resource",
  resourceTemplates: "resource_template",
  skills: "skill",
} as const;

/**
 * §2 components (kiwi's full hash). Each wire object is kept whole except its top-level `_meta`,
 * nested under a key named after its kind, so no wire field can collide with `type`:
 * `{"type":"tool","tool":{…}}`, `{"type":"prompt","prompt":{…}}`, `{"type":"resource","resource":{…}}`,
 * `{"type":"resource_template","resource_template":{…}}`, `{"type":"skill","skill":{…}}` (SEP-2640
 * entries, file digests included), when non-empty `{"type":"server_instructions","instructions":"…"}`,
 * and for a 2026-07-28 server `{"type":"server_discover","server_discover":{…}}` (the discover
 * result without ttlMs, cacheScope, resultType, _meta, instructions and serverInfo). URIs are kept
 * as sent (no normalisation). A listing without skills or discover hashes exactly as before them.
 */
export function fullComponents(listing: WireListing): WireObject[] {
  const out: WireObject[] = [];
  for (const [key, type] of Object.entries(FULL_COMPONENT_KINDS) as [keyof typeof FULL_COMPONENT_KINDS, string][]) {
    for (const item of listing[key]) out.push({ type, [type]: withoutMeta(item) });
  }
  if (typeof listing.instructions === "string" && listing.instructions !== "") {
    out.push({ type: "server_instructions", instructions: listing.instructions });
  }
  // Only a 2026-07-28 listing has one; its volatile fields are dropped here too, whatever the source.
  if (listing.discover) out.push({ type: "server_discover", server_discover: discoverComponent(listing.discover) });
  return out;
}

/** WHATWG URL normalisation (`new URL(uri).href`); a URI the parser rejects is kept as sent. */
export function normalizeUri(uri: CanonicalValue | undefined): CanonicalValue {
  if (typeof uri !== "string") return uri ?? "";
  try {
    return new URL(uri).href;
  } catch {
    return uri;
  }
}

/** A missing or null description (or mimeType) becomes "" (spec §1). */
function orEmptyString(value: CanonicalValue | undefined): CanonicalValue {
  return value === undefined || value === null ? "" : value;
}

/** "Missing or empty" for schemas: absent, null, or an object/array/string with nothing in it. */
function isEmpty(value: CanonicalValue | undefined): boolean {
  if (value === undefined || value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return isMapping(value) && Object.keys(value).length === 0;
}
