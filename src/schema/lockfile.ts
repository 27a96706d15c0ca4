// TypeBox schema of tool.lock.json: the single source of its types and of
// schemas/lockfile.schema.json. Pure. The display form (key order, indent) lives in lockfile/render.ts.
import { type Static, Type } from "@sinclair/typebox";
import { LOCKFILE_VERSION } from "./vocabulary.ts";


const DIGEST_PATTERN = "^sha256:[0-9a-f]{64}$";

/** `sha256:` + 64 lowercase hex digits (shared/specs/integrity.md). */
export const DigestSchema = Type.String({ pattern: DIGEST_PATTERN, description: "sha256:<64 lowercase hex digits>" });

/** A bare lowercase hex SHA-256, as a file entry carries it (the shape the integrity hashes). */
export const Sha256HexSchema = Type.String({ pattern: "^[0-9a-f]{64}$" });

/** `id@version` of a locked tool. */
export const ToolRefSchema = Type.String({ pattern: "^[^@\\s]+@[^@\\s]+$", description: "tool id @ locked version" });

/** One file of a tool: exactly the entry the integrity digest is computed over. */
export const LockedFileSchema = Type.Object(
  {
    path: Type.String({ minLength: 1, description: "relative to the tool root, / separators, no . or .. segments" }),
    sha256: Sha256HexSchema,
    is_executable: Type.Boolean(),
  },
  { additionalProperties: false },
);

/** One locked tool; the key in `tools` is its id. Properties are listed in display order. */
export const LockedToolSchema = Type.Object(
  {
    version: Type.String({ description: "the version as written in the manifest" }),
    type: Type.String({ description: "tool_type (kiwi) or type (magray)" }),
    source: Type.String({ minLength: 1, description: "project-relative manifest file; <builtin>/<id>.yaml for built-ins" }),
    executor: Type.Union([ToolRefSchema, Type.Null()], { description: "resolved executor id@version; null for primitives and knowledge" }),
    integrity: DigestSchema,
    manifest_digest: Type.String({ pattern: DIGEST_PATTERN, description: "sha256 of the manifest's canonical JSON" }),
    files: Type.Array(LockedFileSchema, { description: "sorted by path in code-point order" }),
  },
  { additionalProperties: false },
);

/**
 * An MCP server's interface pin (src/mcp/pin.ts builds and re-verifies it), written through
 * lockfile/fs.ts. Properties are listed in display order; `interface` is the sorted wire snapshot.
 */
export const McpPinSchema = Type.Object(
  {
    name: Type.String({ description: "serverInfo.name when pinned" }),
    version: Type.Optional(Type.String({ description: "serverInfo.version when pinned (informational)" })),
    protocol_version: Type.Optional(Type.String({ description: "the protocol revision agreed on when pinned; kiwi speaks a server pinned under a handshake revision with initialize, so the pin stays comparable" })),
    sandbox: Type.Optional(
      Type.Union([Type.Literal("bubblewrap"), Type.Literal("none")], {
        description: "how a stdio server ran when pinned (informational): some servers describe themselves differently inside and outside a sandbox",
      }),
    ),
    credential: Type.Optional(
      Type.String({
        description: 'for an HTTP server, the credential it was listed with: "none", or a scrypt fingerprint of the credential headers (never the secret); a 2026-07-28 server may list differently per authorization',
      }),
    ),
    interface_hash: DigestSchema,
    full_hash: DigestSchema,
    interface: Type.Record(Type.String(), Type.Unknown(), { description: "wire-listing snapshot both hashes are recomputed from (a 2026-07-28 server's also has discover; a server with the Skills extension, skills)" }),
  },
  { additionalProperties: false },
);


/** The signature a remote tool was accepted with (src/trust/), re-verified offline from the cache. */
export const RemoteSignatureSchema = Type.Object(
  {
    key_id: DigestSchema,
    digest: DigestSchema,
    size: Type.Integer({ minimum: 0, description: "bytes of the signature document blob" }),
  },
  { additionalProperties: false },
);

/**
 * Where a tool pulled from an OCI registry came from (kiwi add writes it with the tool's entry,
 * ops/lock-full-io.ts). Its files live in .ai/tools/.remote/<id>/ and are locked in `tools` as usual.
 */
export const RemoteToolSchema = Type.Object(
  {
    source: Type.String({ pattern: "^oci://[^@\\s]+@sha256:[0-9a-f]{64}$", description: "oci://registry/repository@sha256:<manifest digest>; installs fetch by this digest only" }),
    reference: Type.String({ minLength: 1, description: "the reference it was added from (registry/repository:tag), for kiwi outdated and kiwi update" }),
    integrity: DigestSchema,
    manifest_file: Type.String({ minLength: 1, description: "the manifest file, relative to the tool folder (its bytes are placed too)" }),
    manifest_sha256: Sha256HexSchema,
    signature: Type.Optional(RemoteSignatureSchema),
  },
  { additionalProperties: false },
);


/** package.json's `overrides`, as the tool declares them: a name to a version, or to overrides below it. */
const NpmOverridesSchema = Type.Recursive((This) => Type.Record(Type.String({ minLength: 1 }), Type.Union([Type.String(), This])), {
  $id: "NpmOverrides",
  description: "package.json's overrides (versions npm forces anywhere in the tree), as the tool declares them; absent: none",
});

/**
 * A tool's npm packages, resolved by npm (src/deps/): what the tool requires, npm's own
 * package-lock entries for every package of the tree (name, exact version, tarball and its sha512
 * integrity, dependencies, bins), and once `kiwi install` has installed it, the digest of the
 * installed tree (every file's sha256), which exec verifies the materialised copy against.
 */
export const NpmDependenciesSchema = Type.Object(
  {
    requires: Type.Record(Type.String({ minLength: 1 }), Type.String(), { description: "package name -> range, as the tool declares them" }),
    packages: Type.Record(
      Type.String({ pattern: "^node_modules/", description: "the package's path in node_modules, as npm's package-lock.json keys it" }),
      Type.Object(
        {
          version: Type.String({ minLength: 1 }),
          resolved: Type.Optional(Type.String({ pattern: "^https?://", description: "the tarball npm fetched (npm leaves it out for the configured registry)" })),
          integrity: Type.Optional(Type.String({ pattern: "^sha(512|384|256)-", description: "the registry's subresource integrity of the tarball; absent only for a package bundled in another's tarball (inBundle)" })),
        },
        { additionalProperties: true, description: "npm's package-lock entry, as npm wrote it" },
      ),
      { description: "keyed by node_modules path, sorted" },
    ),
    overrides: Type.Optional(NpmOverridesSchema),
    allow_scripts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "packages whose install scripts kiwi install runs (the tool's allow_scripts); absent: none" })),
    tree: Type.Optional(Type.String({ pattern: DIGEST_PATTERN, description: "sha256 of the installed tree's file list (set by kiwi install)" })),
  },
  { additionalProperties: false },
);

/**
 * A tool's Python distributions, resolved by pip (src/deps/pip-io.ts): the PEP 508 requirements
 * as declared, each distribution's exact version, the file pip chose and its sha256, and once
 * `kiwi install` has installed them, the installed tree's digest.
 */
export const PypiDependenciesSchema = Type.Object(
  {
    requires: Type.Array(Type.String({ minLength: 1 }), { description: "PEP 508 requirements, as the tool declares them" }),
    packages: Type.Record(
      Type.String({ pattern: "^[a-z0-9]+(-[a-z0-9]+)*$", description: "the normalised project name (PEP 503)" }),
      Type.Object(
        {
          version: Type.String({ minLength: 1 }),
          url: Type.String({ minLength: 1, description: "the wheel or sdist pip chose" }),
          sha256: Sha256HexSchema,
        },
        { additionalProperties: false },
      ),
    ),
    allow_scripts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "distributions pip may build from source, running their build code (the tool's allow_scripts); absent: wheels only" })),
    tree: Type.Optional(Type.String({ pattern: DIGEST_PATTERN, description: "sha256 of the installed tree's file list (set by kiwi install)" })),
  },
  { additionalProperties: false },
);

/** The packages of one tool, by ecosystem. */
export const ToolDependenciesSchema = Type.Object({ npm: Type.Optional(NpmDependenciesSchema), pypi: Type.Optional(PypiDependenciesSchema) }, { additionalProperties: false });

export const LockfileSchema = Type.Object(
  {
    lockfileVersion: Type.Integer({ minimum: 1, description: `format version; this kiwi writes ${LOCKFILE_VERSION}` }),
    tools: Type.Record(Type.String({ minLength: 1 }), LockedToolSchema, { description: "keyed by tool id, sorted by id" }),
    remote: Type.Optional(Type.Record(Type.String({ minLength: 1 }), RemoteToolSchema, { description: "tools added from OCI registries, keyed by tool id; absent when there are none" })),
    dependencies: Type.Optional(Type.Record(Type.String({ minLength: 1 }), ToolDependenciesSchema, { description: "the packages each tool needs, keyed by tool id; absent when no tool needs any" })),
    mcp_servers: Type.Record(Type.String({ minLength: 1 }), McpPinSchema, { description: "interface pins keyed by MCP server tool id" }),
  },
  {
    additionalProperties: false,
    $id: "https://kiwi.dev/schemas/lockfile.schema.json",
    title: "kiwi tool.lock.json",
  },
);

export type LockedFile = Static<typeof LockedFileSchema>;
export type LockedTool = Static<typeof LockedToolSchema>;
export type McpPin = Static<typeof McpPinSchema>;
export type RemoteTool = Static<typeof RemoteToolSchema>;
export type Lockfile = Static<typeof LockfileSchema>;
export type NpmDependencies = Static<typeof NpmDependenciesSchema>;
export type PypiDependencies = Static<typeof PypiDependenciesSchema>;
export type ToolDependencies = Static<typeof ToolDependenciesSchema>;
