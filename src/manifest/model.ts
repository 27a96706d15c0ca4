// The tool model: every manifest form and both dialects (kiwi tool.yaml, magray tool.json) end up
// as this one shape. Pure types and tables; parsing lives in the sibling files.
import type { CanonicalValue } from "../integrity/value.ts";
import type { ToolType } from "../schema/vocabulary.ts";
import type { Position } from "../integrity/parse-problem.ts";
import type { IgnoreDirective } from "./ignore-comments.ts";
import type { FileIdentity } from "../cache/stat-cache-io.ts";
import { fileOnDisk } from "../findings/finding.ts";

/** Tool types whose executor must be null (everything else requires one). */
export const EXECUTORLESS_TYPES: readonly ToolType[] = ["primitive", "knowledge"];

/** The built-in primitives: the only things that execute. */
export const PRIMITIVES = ["subprocess", "http_client"] as const;
export type PrimitiveId = (typeof PRIMITIVES)[number];

/** How the manifest was written on disk. */
export const MANIFEST_FORMS = ["directory", "file", "script", "markdown", "builtin"] as const;
export type ManifestForm = (typeof MANIFEST_FORMS)[number];

/** Which manifest vocabulary the file uses; findings speak in its terms. */
export type Dialect = "kiwi" | "magray";

/** Manifest file names that make a directory a directory tool, in precedence order. */
export const DIRECTORY_MANIFESTS = ["tool.yaml", "tool.yml", "tool.json"] as const;

/** `executor: python_runtime@^1.4` parsed. */
export interface ExecutorRef {
  id: string;
  /** A semver range, or null for "any version". */
  range: string | null;
  /** As written. */
  raw: string;
}

/** A file that belongs to a tool, as listed at discovery (bytes are read only when hashing). */
export interface ToolFile {
  /** Relative to the tool root, `/`-separated. */
  path: string;
  /** Absolute path on disk (the real file, for a symlink that stays inside the tool). */
  abs: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  isExecutable: boolean;
}

/** A declared capability with its limits, dialect-independent. */
export interface Capability {
  /** `fs.read`, `fs.write`, `net.outbound`, `shell.execute`, `env.read`, `proc.spawn`. */
  name: string;
  paths?: string[];
  hosts?: string[];
  /** JSON pointer of the declaration, for findings. */
  pointer: string;
}

/** Resource limits, dialect-independent; undefined means "kiwi's default". */
export interface Limits {
  memoryMb?: number;
  timeoutMs?: number;
  cpuSeconds?: number;
  openFiles?: number;
  processes?: number;
  outputBytes?: number;
  fuel?: number;
}

/** Requirements a tool declares in files of its own (deps/package-files.ts reads them). */
/** package.json's `overrides`: a package name to its version, or to overrides below it (`"."`: its own). */
export interface NpmOverrides {
  [name: string]: string | NpmOverrides;
}

export interface PackageFileRequirements {
  /** PEP 508 requirements from requirements.txt and PEP 723 inline metadata, with where each came from. */
  pypi: { spec: string; source: string }[];
  /**
   * npm dependencies from package.json, its `overrides` (versions forced anywhere in the tree) and its
   * `allowScripts` (npm 11: which packages may run install scripts).
   */
  npm?: { dependencies: Record<string, string>; overrides?: NpmOverrides; allowScripts?: Record<string, unknown>; source: string };
  /** Lines kiwi cannot read, with why and how to write them (reported by `kiwi check`). */
  problems: { source: string; message: string; hint: string }[];
}

/** One tool, however it was written. */
export interface Tool {
  id: string;
  version: string;
  /** As written; validation reports unknown types. */
  type: string;
  executor: ExecutorRef | null;
  description?: string;
  dialect: Dialect;
  form: ManifestForm;
  /** Project-relative tool root ('' for single-file tools at the top, `<builtin>` for built-ins). */
  root: string;
  /** Absolute tool root. */
  rootAbs: string;
  /** Project-relative manifest file (the script itself for embedded metadata). */
  manifestFile: string;
  /** The manifest exactly as written (lossless numbers): what integrity hashes. */
  manifest: CanonicalValue;
  /** The same document as plain JavaScript values, for validators. */
  doc: Record<string, unknown>;
  /** `config` (kiwi) or the mapped equivalent (magray: entry_point, config). */
  config: Record<string, unknown>;
  /**
   * `config` as written, lossless (integers past 2^53 as bigint, 1.0 as Float): what payloads are
   * rendered from, so what is sent is what was hashed. Absent on hand-built test tools.
   */
  configLossless?: { [key: string]: CanonicalValue };
  /** The declared `parameters` list as written (validated later). */
  parameters: unknown;
  /** `validation.child_schemas` as written. */
  childSchemas: unknown;
  /** Entry point relative to the tool root, when the type has one. */
  entrypoint?: string;
  /** The declared language (`language`, kiwi_mcp's `manifest.language`, `config.language`), as written. */
  language?: string;
  capabilities: Capability[];
  limits: Limits;
  /** Files that belong to the tool (excluding the manifest file of a directory tool). */
  files: ToolFile[];
  /**
   * A directory tool's manifest file's stat identity as discovery listed it (kiwi check keys what the
   * file holds by it). Not part of what the tool is: the lock index's model key leaves it out.
   */
  manifestStat?: FileIdentity;
  /** Requirements in the tool's own requirements.txt, package.json or PEP 723 block (discovery). */
  fileRequirements?: PackageFileRequirements;
  /** Maps a model field (`id`, `version`, `type`, `executor`, `entrypoint`, …) to its pointer in the file. */
  pointers: Record<string, string>;
  /** Source position of a JSON pointer in the manifest file (keys point at the key). */
  locate: (pointer: string) => Position | undefined;
  /**
   * The manifest's `# kiwi-ignore:` comments (manifest/ignore-comments.ts), absent when it has none.
   * Plain data: the lock index's model key holds it, so a comment added or removed is a changed verdict.
   */
  ignores?: IgnoreDirective[];
}

/** A manifest file kiwi could not turn into a tool, with why. */
export interface BrokenManifest {
  file: string;
  rule: string;
  message: string;
  hint?: string;
  position?: Position;
}

/**
 * The tool with `change` applied to both views of its config (plain and as written), so a config
 * kiwi adjusts before a run (an installed package's command, PYTHONPATH) is not lost from either.
 */
export function withConfig<T extends Pick<Tool, "config" | "configLossless">>(tool: T, change: (config: Record<string, unknown>) => Record<string, unknown>): T {
  const lossless = tool.configLossless ? { configLossless: change(tool.configLossless) as { [key: string]: CanonicalValue } } : {};
  return { ...tool, config: change(tool.config), ...lossless };
}

/**
 * Where remote tools live (registry/place-io.ts places them), relative to the project root: pulled
 * from a registry by `kiwi add` and `kiwi install`, pinned in tool.lock.json, never committed.
 */
export const REMOTE_TOOLS_DIR = ".ai/tools/.remote";

/**
 * The project's ignore file, relative to the project root: findings it lets through where no
 * `# kiwi-ignore:` comment can say so (validate/ignore-file.ts reads its entries).
 */
export const IGNORE_FILE = ".ai/kiwi-ignore.yaml";

/**
 * The ignore file as discovery found it: its text, or why it cannot be read; its stat (size,
 * mtimeMs, ctimeMs, ino), on which the stat-keyed memos of a verdict key; and the sha256 of its
 * bytes, on which the lock's remembered check keys. Absent when the project has none.
 */
export interface IgnoreFileText {
  text?: string;
  unreadable?: string;
  stat: [number, number, number, number];
  digest: string;
  /** The day (UTC, YYYY-MM-DD) it was read: an entry's `expires` is judged against it. */
  day: string;
}

/** The UTC day (YYYY-MM-DD) of a time in ms: what an ignore entry's `expires` is compared with. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Whether a verdict read from the ignore file's text depends on the day too: an entry of it may
 * have `expires`. Memos of such a verdict (the lock's, the staged check's) hold for that day only; a
 * file that only mentions the word somewhere (a comment) costs them a day's life, nothing else.
 */
export function ignoreFileDated(file: Pick<IgnoreFileText, "text">): boolean {
  return file.text !== undefined && file.text.includes("expires");
}

/** Whether a tool is one of those, by its project-relative root. */
export function isRemoteTool(tool: Pick<Tool, "root">): boolean {
  return tool.root.startsWith(`${REMOTE_TOOLS_DIR}/`);
}

/**
 * The file a tool's manifestFile names: an Agent Plugin's MCP server is `<plugin>/mcp.json#<server>`
 * (one file, several tools), every other tool its manifest's path.
 */
export function manifestPathOf(manifestFile: string): string {
  return fileOnDisk(manifestFile);
}
