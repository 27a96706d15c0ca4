// The formats' vocabulary: tool types, the id and version formats, magray's capability words, the
// lockfile version and key orders. The TypeBox schemas (manifest.ts, lockfile.ts) are built from
// these; code that needs only a word imports it from here, without building the schemas (~0.7 ms
// of every start-up that loads them). Pure.

/** Every tool type kiwi knows; the one list everything else reads (manifest/model.ts and
 * validate/ included: the format owns its vocabulary, so schema/ needs nothing from manifest/). */
export const TOOL_TYPES = [
  "primitive",
  "runtime",
  "script",
  "api",
  "mcp_server",
  "mcp_tool",
  "knowledge",
  "directive",
  "wasm",
  "native",
] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

/** THE tool id format: 1-64 of a-z, 0-9, '_' and '-', starting with a letter. */
export const TOOL_ID_PATTERN = "^[a-z][a-z0-9_-]{0,63}$";
export const TOOL_ID = new RegExp(TOOL_ID_PATTERN);

/** Semantic version 2.0.0, end-anchored (pre-release and build metadata allowed). */
export const SEMVER_PATTERN =
  "^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$";

const PART = "(?:0|[1-9]\\d*|[xX*])";
const PRE = "(?:-[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?";
const PARTIAL = `[vV]?${PART}(?:\\.${PART}(?:\\.${PART}${PRE})?)?`;
const COMPARATOR = new RegExp(`^(?:<=|>=|<|>|=|\\^|~>?)?${PARTIAL}$`);
const HYPHEN = new RegExp(`^${PARTIAL} - ${PARTIAL}$`);

/**
 * True for an npm-style range (`^1.4`, `~1.2.3`, `>=1 <2`, `1.x`, `1.0.0 - 2.0.0`, `a || b`).
 * Bun.semver.satisfies accepts garbage as "any version", so ranges are checked with this first.
 * npm reads any other spec as a dist-tag (`latest`, `next`), a name for whatever version was last
 * published under it.
 */
export function isSemverRange(range: string): boolean {
  if (range.length > 256) return false;
  return range.split("||").every((set) => {
    const s = set.trim().replace(/\s+/g, " ");
    if (s === "") return true;
    if (HYPHEN.test(s)) return true;
    return s
      .replace(/(<=|>=|<|>|=|\^|~>?) /g, "$1")
      .split(" ")
      .every((c) => COMPARATOR.test(c));
  });
}

/** magray's capability words. */
/** A subprocess link's config.stdin: json (the parameters, then EOF), none (an empty stdin), inherit (kiwi's own). */
export const STDIN_MODES = ["json", "none", "inherit"] as const;
export type StdinMode = (typeof STDIN_MODES)[number];

/** A config.env name a process environment can carry: not empty, no '=' and no NUL. */
export function isEnvName(name: string): boolean {
  return name !== "" && !name.includes("=") && !name.includes("\0");
}

export const MAGRAY_CAPABILITY_WORDS = ["filesystem", "network", "shell", "ui", "environment", "process"] as const;

/** Fields whose problems a dedicated rule reports, so the shape check stays quiet about them. */
export const OWNED_POINTERS: Record<"kiwi" | "magray", readonly string[]> = {
  kiwi: ["/tool_id", "/tool_type", "/version", "/executor", "/parameters", "/validation/child_schemas"],
  magray: ["/name", "/type", "/version", "/entry_point", "/config/parameters", "/capabilities/"],
};

/** The lockfile format this kiwi writes; a file with a larger number comes from a newer kiwi. */
export const LOCKFILE_VERSION = 1;

/** Pin keys in the order they are written; anything nested is written with sorted keys. */
export const MCP_PIN_KEYS = ["name", "version", "protocol_version", "sandbox", "credential", "interface_hash", "full_hash", "interface"] as const;

/** Remote entry keys in the order they are written. */
export const REMOTE_KEYS = ["source", "reference", "integrity", "manifest_file", "manifest_sha256", "signature"] as const;
