// A pin: what kiwi records about an MCP server in tool.lock.json's `mcp_servers` section: its
// self-reported name, both hashes and a canonical snapshot of its interface, so a fresh clone can
// show a diff without the old server. Pure: listings in, pin records out (and back).
import { isMapping } from "../integrity/value.ts";
import { compareCodePoints, renderCanonicalJson } from "../integrity/canonical.ts";
import { formatDigest } from "../integrity/digest.ts";
import type { CanonicalValue } from "../integrity/value.ts";
import { KiwiError } from "../errors.ts";
import { type InterfaceDiff, diffListings } from "./interface-diff.ts";
import { hashInterface } from "./interface.ts";
import { LIST_KINDS, type ListKey, type WireListing, type WireObject, checkWireListing, withoutMeta } from "./listing.ts";

/** One server's pin, as stored under `mcp_servers.<server tool id>`. Keys in display order. */
export interface McpPin {
  /** `serverInfo.name` as the server reported it when pinned ("" if it sent none). */
  name: string;
  /** `serverInfo.version` at pin time: informational, never part of a hash. */
  version?: string;
  /** The protocol revision negotiated at pin time (informational). */
  protocol_version?: string;
  /** How a stdio server ran when pinned: "bubblewrap" or "none" (informational, never part of a hash). */
  sandbox?: "bubblewrap" | "none";
  /**
   * For an HTTP server, the credential the listing was taken with: "none", or a scrypt fingerprint
   * of the credential headers (never the secret). Lists may differ by authorization (2026-07-28).
   */
  credential?: string;
  /** `sha256:<hex>`, kiji-safeguard compatible (shared/specs/mcp-interface.md §1). */
  interface_hash: string;
  /** `sha256:<hex>`, kiwi's full hash (§2). */
  full_hash: string;
  /**
   * The interface in wire-listing shape (§3) with `_meta` removed and every list sorted by its key
   * (name, uri, uriTemplate); empty lists are left out. Both hashes are recomputed from it on read.
   */
  interface: WireObject;
}

/** Builds the pin for a live or offline listing. */
export function pinFromListing(listing: WireListing): McpPin {
  const hashes = hashInterface(listing);
  const pin: McpPin = {
    name: typeof listing.serverInfo?.name === "string" ? listing.serverInfo.name : "",
    interface_hash: formatDigest(hashes.interface_hash),
    full_hash: formatDigest(hashes.full_hash),
    interface: snapshotListing(listing),
  };
  if (typeof listing.serverInfo?.version === "string") pin.version = listing.serverInfo.version;
  if (listing.protocolVersion) pin.protocol_version = listing.protocolVersion;
  return reorder(pin);
}

/** The canonical snapshot: sorted lists without `_meta`, instructions when non-empty. */
export function snapshotListing(listing: WireListing): WireObject {
  const out: WireObject = {};
  if (typeof listing.instructions === "string" && listing.instructions !== "") out.instructions = listing.instructions;
  if (listing.discover) out.discover = listing.discover;
  for (const { key } of LIST_KINDS) {
    if (listing[key].length === 0) continue;
    out[key] = sortItems(key, listing[key].map(withoutMeta));
  }
  return out;
}

/**
 * What changed between a pin and a live interface; when it changed and the two were taken under
 * different sandbox modes, the diff says so (desktop-commander adds Docker notes to its tool
 * descriptions outside a sandbox only).
 */
export function diffFromPin(pin: McpPin, live: McpPin, liveListing: WireListing, subject: string): InterfaceDiff {
  const diff = diffListings(listingFromPin(pin, `pin of ${subject}`), liveListing);
  if (diff.changes.length > 0 && pin.sandbox !== undefined && live.sandbox !== undefined && pin.sandbox !== live.sandbox) {
    diff.sandbox = { pinned: pin.sandbox, live: live.sandbox };
  }
  if (diff.changes.length > 0 && pin.credential !== undefined && live.credential !== undefined && pin.credential !== live.credential) {
    diff.credential = { pinned: pin.credential, live: live.credential };
  }
  return diff;
}

/** The pin with the sandbox mode it was taken under, keys in display order. */
export function withSandbox(pin: McpPin, sandbox: NonNullable<McpPin["sandbox"]>): McpPin {
  return reorder({ ...pin, sandbox });
}

/** The pin with the credential identity an HTTP server was listed under, keys in display order. */
export function withCredential(pin: McpPin, credential: string): McpPin {
  return reorder({ ...pin, credential });
}

/** The listing a pin describes (serverInfo from the pin's name and version). */
export function listingFromPin(pin: McpPin, subject: string): WireListing {
  const listing = checkWireListing(pin.interface, subject);
  listing.serverInfo = { name: pin.name, ...(pin.version !== undefined ? { version: pin.version } : {}) };
  if (pin.protocol_version) listing.protocolVersion = pin.protocol_version;
  return listing;
}

/**
 * Reads a pin record from the lockfile and re-derives both hashes from its snapshot: a pin whose
 * stored hash does not match its own snapshot was hand-edited, and is rejected rather than trusted.
 */
export function parsePin(value: CanonicalValue, server: string): McpPin {
  const subject = `tool.lock.json mcp_servers.${server}`;
  if (!isMapping(value)) throw invalid(subject, "is not an object");
  const { name, version, protocol_version, sandbox, credential, interface_hash, full_hash } = value;
  if (typeof name !== "string") throw invalid(subject, 'has no string "name"');
  if (typeof interface_hash !== "string" || typeof full_hash !== "string") throw invalid(subject, "has no interface_hash/full_hash");
  if (!isMapping(value.interface)) throw invalid(subject, 'has no "interface" snapshot');
  const pin: McpPin = { name, interface_hash, full_hash, interface: value.interface };
  if (typeof version === "string") pin.version = version;
  if (typeof protocol_version === "string") pin.protocol_version = protocol_version;
  if (sandbox === "bubblewrap" || sandbox === "none") pin.sandbox = sandbox;
  if (typeof credential === "string") pin.credential = credential;
  const recomputed = hashInterface(listingFromPin(pin, subject));
  if (formatDigest(recomputed.interface_hash) !== interface_hash || formatDigest(recomputed.full_hash) !== full_hash) {
    throw new KiwiError("E_LOCK_INVALID", `${subject}: the stored hashes do not match the stored interface snapshot`, {
      hint: `the pin was edited by hand; re-pin deliberately with "kiwi mcp pin ${server}" after reviewing the server`,
      details: {
        server,
        stored: { interface_hash, full_hash },
        recomputed: { interface_hash: formatDigest(recomputed.interface_hash), full_hash: formatDigest(recomputed.full_hash) },
      },
    });
  }
  return reorder(pin);
}

/** True when the live listing matches the pin: same name and both hashes equal. */
export function pinMatches(pin: McpPin, live: McpPin): boolean {
  return pin.name === live.name && pin.interface_hash === live.interface_hash && pin.full_hash === live.full_hash;
}

const SORT_KEY = Object.fromEntries(LIST_KINDS.map((k) => [k.key, k.id])) as Record<ListKey, string>;

function sortItems(key: ListKey, items: WireObject[]): WireObject[] {
  const id = SORT_KEY[key];
  const keyed = items.map((item) => ({ item, id: String(item[id] ?? ""), text: renderCanonicalJson(item) }));
  keyed.sort((a, b) => compareCodePoints(a.id, b.id) || compareCodePoints(a.text, b.text));
  return keyed.map((k) => k.item);
}

function reorder(pin: McpPin): McpPin {
  const out: McpPin = { name: pin.name } as McpPin;
  if (pin.version !== undefined) out.version = pin.version;
  if (pin.protocol_version !== undefined) out.protocol_version = pin.protocol_version;
  if (pin.sandbox !== undefined) out.sandbox = pin.sandbox;
  if (pin.credential !== undefined) out.credential = pin.credential;
  out.interface_hash = pin.interface_hash;
  out.full_hash = pin.full_hash;
  out.interface = pin.interface;
  return out;
}

function invalid(subject: string, what: string): KiwiError {
  return new KiwiError("E_LOCK_INVALID", `${subject} ${what}`, {
    hint: "restore tool.lock.json from version control, or re-pin the server with \"kiwi mcp pin\"",
  });
}
