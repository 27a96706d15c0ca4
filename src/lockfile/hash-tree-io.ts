// Hashes every tool of a project: file bytes (through the stat cache when given), then each
// tool's integrity. The one place lock, install and verify read tool bytes from the tree.
import { lstatSync } from "node:fs";
import { RACY_MARGIN_MS, type StatCache } from "../cache/stat-cache-io.ts";
import { hashFileHex } from "../cache/hash-io.ts";
import type { PrehashedFiles } from "../cache/prehash-io.ts";
import { KiwiError } from "../errors.ts";
import type { FileEntry } from "../integrity/tool.ts";
import { join, resolve } from "node:path";
import type { Project } from "../manifest/discover-io.ts";
import type { Listing } from "../manifest/project-io.ts";
import { suggest } from "../resolve/suggest.ts";
import { type Tool, type ToolFile, manifestPathOf } from "../manifest/model.ts";
import { type HashedTool, hashTool } from "./build.ts";

/** A hashed tool that still knows its files on disk. */
export interface TreeTool extends HashedTool {
  tool: Tool;
}

export interface HashTreeOptions {
  /** Reuse digests of files whose stat is unchanged; omit to read every byte (verify). */
  statCache?: StatCache;
  /** Digests a worker computed during discovery (cold runs), used when the stat matches. */
  prehashed?: PrehashedFiles;
  /** Manifest stat identities by manifest file (from fingerprintTree), for the integrity memo. */
  manifestIdentities?: ReadonlyMap<string, string>;
  /** Each tool's manifest canonical text and digest, when rendered already (a cold lock, see lock-full-io.ts). */
  manifests?: ReadonlyMap<Tool, { canonical: string; hex: string }>;
  onProgress?: (done: number, total: number) => void;
}

/** Hashes every tool of the project, in the project's tool order. */
export function hashProjectTools(project: Project, options: HashTreeOptions = {}): TreeTool[] {
  const total = project.tools.reduce((n, t) => n + t.files.length, 0);
  let done = 0;
  return project.tools.map((tool) => {
    const entries: FileEntry[] = tool.files.map((file) => {
      const sha256 = hashToolFile(project, tool, file, options.statCache, options.prehashed);
      options.onProgress?.(++done, total);
      return { path: file.path, sha256, is_executable: file.isExecutable };
    });
    const memo = options.statCache ? { key: tool.manifestFile, memo: options.statCache, manifestIdentity: options.manifestIdentities?.get(tool.manifestFile) } : undefined;
    return { ...hashTool(tool, entries, memo, options.manifests?.get(tool)), tool };
  });
}

function hashToolFile(project: Project, tool: Tool, file: ToolFile, statCache: StatCache | undefined, prehashed: PrehashedFiles | undefined): string {
  const key = tool.root ? `${tool.root}/${file.path}` : file.path;
  const known = statCache?.lookup(key, file);
  if (known) return known;
  const pre = prehashed?.digestIf(file.abs, file);
  if (pre !== undefined) {
    statCache?.record(key, file, pre);
    return pre;
  }
  let hex: string;
  try {
    hex = hashFileHex(file.abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "EIO";
    throw new KiwiError("E_IO", `cannot read ${key} of tool "${tool.id}": ${code}`, {
      hint: code === "ENOENT" ? "the file disappeared while kiwi was reading the tree; run the command again" : "make the file readable by the user running kiwi",
      cause: error,
      details: { file: key, tool: tool.id },
    });
  }
  statCache?.record(key, file, hex);
  return hex;
}

/** A tool by id, or by a path (its manifest file or its folder) relative to `cwd`. */
export function findTool(project: Project, arg: string, cwd: string): Tool {
  const byId = project.tools.find((t) => t.id === arg);
  if (byId) return byId;
  const abs = resolve(cwd, arg);
  const byPath = project.tools.find((t) => t.form !== "builtin" && (resolve(project.root, t.manifestFile) === abs || (t.form === "directory" && t.rootAbs === abs)));
  if (byPath) return byPath;
  const near = suggest(arg, project.tools.map((t) => t.id));
  throw new KiwiError("E_TOOL_NOT_FOUND", `no tool has the id or path "${arg}"`, {
    hint: near ? `did you mean "${near}"?` : "pass a tool_id (or magray name) from .ai/tools/, or the path of a manifest or tool folder",
  });
}

/**
 * A digest of everything a lock of this project depends on, from stat alone (no bytes read):
 * every manifest's and every tool file's path, size, mtime, ctime, inode and mode bit, the
 * discovery findings, and `extra` (kiwi's version, options). `racy` when any of them changed
 * within RACY_MARGIN_MS of `startedAt`, in which case it must not be remembered.
 */
export function fingerprintTree(project: Project, extra: unknown, startedAt: number, listing?: Listing): { digest: string; racy: boolean; manifests: Map<string, string> } {
  const manifests = new Map<string, string>();
  const limit = startedAt - RACY_MARGIN_MS;
  const fileCount = project.tools.reduce((n, t) => n + t.files.length + 1, 0);
  // Numbers go in as raw doubles (formatting 50,000 of them as text would cost more than the rest).
  const numbers = new Float64Array(fileCount * 5);
  const names: string[] = [JSON.stringify(extra), project.root, JSON.stringify(project.findings)];
  let n = 0;
  let racy = false;
  const add = (size: number, mtimeMs: number, ctimeMs: number, ino: number, flag: number) => {
    if (mtimeMs >= limit || ctimeMs >= limit) racy = true;
    numbers[n++] = size;
    numbers[n++] = mtimeMs;
    numbers[n++] = ctimeMs;
    numbers[n++] = ino;
    numbers[n++] = flag;
  };
  for (const tool of project.tools) {
    if (tool.form === "builtin") {
      names.push(`B:${tool.id}`);
      continue;
    }
    let st;
    try {
      // The walk's stat when the caller took one (taken before discovery read the manifest, so a
      // manifest changed since reads as changed next time), else the disk's.
      const abs = join(project.root, manifestPathOf(tool.manifestFile));
      st = listing?.stat(abs) ?? lstatSync(abs);
    } catch {
      return { digest: "", racy: true, manifests: new Map() };
    }
    names.push(`T:${tool.manifestFile}`);
    add(st.size, st.mtimeMs, st.ctimeMs, st.ino, -1);
    manifests.set(tool.manifestFile, `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`);
    for (const f of tool.files) {
      names.push(f.path, f.abs);
      add(f.size, f.mtimeMs, f.ctimeMs, f.ino, f.isExecutable ? 1 : 0);
    }
  }
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(names.join("\0"));
  hasher.update(new Uint8Array(numbers.buffer, 0, n * 8));
  return { digest: hasher.digest("hex"), racy, manifests };
}
