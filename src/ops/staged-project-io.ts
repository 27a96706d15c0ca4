// The project as `kiwi check --staged` reads it. A commit usually touches one tool of many, and the
// verdict only looks closely at a few: the changed tools, the tools whose chain runs through them,
// their executors, tools sharing an id with those, and the tools whose lockfile entries are judged.
// When the lock index (written by the last `kiwi lock`) vouches for the tree, every other tool is a
// stub holding what the pure layers read of any tool (id, executor, form, root, manifest file),
// taken from the index; the rest of it is read from disk, exactly as discovery reads it, the first
// time anything asks (a getter), so what the verdict looks at is never a guess. The index vouches
// when the memo key read the tree through it (staged-memo-io.ts identifyTree: the tree holds
// exactly the entries it recorded) and every staged path belongs to one tool; the tools with a
// changed or staged entry, and any tool a discovery finding was about at the last lock, are read
// at once. Otherwise (the key walked the tree) the whole tree is discovered, from that walk.
import { join } from "node:path";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { type IndexScan, type IndexTool, type LockIndex, positionOf } from "../lockfile/lock-index-io.ts";
import { LOCKFILE_NAME } from "../lockfile/name.ts";
import { BUILTIN_IDS, builtinTool } from "../manifest/builtins.ts";
import { type Project, type ReadProjectOptions, readProject, readToolAlone } from "../manifest/discover-io.ts";
import type { Tool } from "../manifest/model.ts";
import type { ParsedManifest } from "../manifest/forms.ts";
import { parseYaml } from "../manifest/yaml.ts";
import { readIgnoreFileText } from "../manifest/ignore-file-io.ts";
import { parseManifestMemo } from "../exec/chain-io.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import { jitAtFullSpeed } from "../self.ts";

export interface StagedProjectOptions {
  cacheDir: string;
  /** The tree as the memo key read it through the lock index: the index and what changed since. */
  indexed?: { index: LockIndex; scan: IndexScan };
  /** The tree as the memo key walked it (no usable index then, or entries added or removed since): discovery reads it. */
  raw?: ReadProjectOptions["raw"];
  /** The time (ms) of this run: the ignore file's `expires` dates are judged against its day. */
  now?: number;
}

/**
 * The project for the staged check of `paths` (project-relative); `partial` says whether the index
 * served it, and then `read` holds the index positions of the tools read from disk so far: those
 * read at once and every stub something asked for more than the index holds. It grows while the
 * check runs; once the verdict is taken, it names every tool whose files the verdict can depend on
 * (the staged memo keys on their entries alone: staged-memo-io.ts dependenciesOf).
 */
export function readStagedProject(root: string, paths: readonly string[], options: StagedProjectOptions): { project: Project; partial: boolean; read?: ReadonlySet<number> } {
  const indexed = options.indexed?.index.root === root && !options.indexed.scan.structural ? options.indexed : undefined;
  const read = new Set(indexed?.scan.tools.keys());
  const partial = indexed && readPartial(root, paths, indexed.index, read, options.cacheDir, options.now);
  if (partial) return { project: partial, partial: true, read };
  // Discovering every tool runs long enough for compiled code to pay (the staged check starts at the start-up policy: cli.ts).
  jitAtFullSpeed();
  return { project: readProject(root, { cacheDir: options.cacheDir, raw: options.raw, now: options.now }), partial: false };
}

/**
 * The tools (index positions) the staged check of `paths` reads at once whatever changed: those a
 * discovery finding was about at the last lock and those a staged path belongs to. Undefined when
 * the index cannot serve the project (a damaged tools section, a staged path it cannot pin on one tool).
 */
export function toolsReadAtOnce(index: LockIndex, paths: readonly string[]): Set<number> | undefined {
  const read = new Set<number>();
  const tools = index.tools;
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i]!;
    // A damaged tools section reads as placeholder rows, which vouch for nothing.
    if (t.source === "") return undefined;
    // A tool a discovery finding was about is read at once, so its findings are the project's too:
    // a stub is only ever a tool discovery had nothing to say about.
    if (!t.clean) read.add(i);
  }
  const prefix = `${TOOLS_DIR.split("\\").join("/")}/`;
  for (const path of paths) {
    if (path === LOCKFILE_NAME) continue;
    const at = path.startsWith(prefix) ? positionOf(index, path.slice(prefix.length)) : -1;
    // A staged path the index cannot pin on one tool (a deletion, a file no tool owns, a plugin's).
    if (at === -1 || index.owners[at]! < 0) return undefined;
    read.add(index.owners[at]!);
  }
  return read;
}

/** The project with the tools in `read` (index positions: a changed entry) and those toolsReadAtOnce names read, every other one a stub (which adds itself to `read` when read). */
function readPartial(root: string, paths: readonly string[], index: LockIndex, read: Set<number>, cacheDir: string, now?: number): Project | undefined {
  const atOnce = toolsReadAtOnce(index, paths);
  if (!atOnce) return undefined;
  for (const t of atOnce) read.add(t);
  const tools: Tool[] = [];
  const findings: Finding[] = [];
  const indexed = index.tools; // a getter: read once, not twice per tool
  for (let t = 0; t < indexed.length; t++) {
    const known = indexed[t]!;
    if (!read.has(t)) {
      tools.push(new Stub(root, known, t, read, cacheDir));
      continue;
    }
    const fresh = readIndexedTool(root, known, cacheDir);
    findings.push(...fresh.findings);
    if (fresh.tool) tools.push(fresh.tool);
    // A manifest file or folder that no longer parses is no tool, only its finding, as in discovery;
    // a script or page without metadata (or a plugin's server gone) is a finding of discovery's walk.
    else if (fresh.findings.length === 0 || (known.form !== "file" && known.form !== "directory") || known.source.includes("#")) return undefined;
  }
  // The built-ins are those no project tool overrides: a changed id may have moved that line.
  // One pass without a closure per tool (the interpreter runs it over the whole tree): only a
  // built-in's id can take a built-in's place.
  const builtinIds = new Set<string>(BUILTIN_IDS);
  const overridden = new Set<string>();
  const builtins: string[] = [];
  for (let t = 0; t < tools.length; t++) {
    const tool = tools[t]!;
    if (tool.form === "builtin") builtins.push(tool.id);
    else if (builtinIds.has(tool.id)) overridden.add(tool.id);
  }
  if (builtins.join("\0") !== BUILTIN_IDS.filter((id) => !overridden.has(id)).join("\0")) return undefined;
  findings.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0)));
  const ignoreFile = readIgnoreFileText(root, now);
  return { root, toolsDir: join(root, TOOLS_DIR), tools, findings, ...(ignoreFile ? { ignoreFile } : {}) };
}

function readIndexedTool(root: string, known: IndexTool, cacheDir: string): { tool?: Tool; findings: Finding[] } {
  if (known.form === "builtin") return { tool: builtinTool(known.id, (text) => parseBuiltin(text, cacheDir)), findings: [] };
  return readToolAlone(root, known.source);
}

/**
 * A built-in's manifest through exec's content memo (exec/chain-io.ts parseManifestMemo: the same
 * bytes in the same syntax always parse to the same document), as kiwi exec reads it: a first
 * staged check reads the changed tool's runtime and primitive, and parsing their YAML in a fresh
 * process cost ~0.3 and ~0.15 ms. The memo keeps no positions: the YAML parser gives them, as
 * builtinTool's own parse would, the first time a finding asks.
 */
function parseBuiltin(text: string, cacheDir: string): Pick<ParsedManifest, "value" | "locate"> | "none" {
  const parsed = parseManifestMemo(Buffer.from(text), "yaml", cacheDir);
  if (parsed === "none") return "none";
  let positions: ReturnType<typeof parseYaml> | undefined;
  return { value: parsed.value, locate: (pointer) => (positions ??= parseYaml(text)).locate(pointer) };
}

/**
 * A tool whose entries are unchanged since the index: the index's fields (own data), the rest read
 * from disk, exactly as discovery reads it, the first time anything asks (getters on the class,
 * shared by every stub: a thousand getter-laden object literals cost ~1.5 ms to build and are slow
 * to read). `implements Tool` makes a field added to Tool a compile error here until it is placed.
 * A JSON copy is the tool as read (toJSON); a spread copies only the index's fields (and the
 * stub's own state), and nothing on the staged check's path spreads a tool. The state is in plain
 * fields: #private ones cost three times as much to set in a thousand constructors.
 */
class Stub implements Tool {
  readonly id: string;
  readonly executor: Tool["executor"];
  readonly form: Tool["form"];
  readonly root: string;
  readonly manifestFile: string;
  private readonly at: string;
  private readonly known: IndexTool;
  private readonly position: number;
  private readonly reads: Set<number>;
  private readonly cacheDir: string;
  private full: Tool | undefined = undefined;

  constructor(root: string, known: IndexTool, position: number, reads: Set<number>, cacheDir: string) {
    this.id = known.id;
    this.executor = known.executor;
    this.form = known.form;
    this.root = known.root;
    this.manifestFile = known.source;
    this.at = root;
    this.known = known;
    this.position = position;
    this.reads = reads;
    this.cacheDir = cacheDir;
  }

  private read(): Tool {
    if (this.full === undefined) {
      // Recorded before the read: a read that throws still read the tool's files.
      this.reads.add(this.position);
      this.full = readUnchanged(this.at, this.known, this.cacheDir);
    }
    return this.full;
  }

  get version() { return this.read().version; }
  get type() { return this.read().type; }
  get description() { return this.read().description; }
  get dialect() { return this.read().dialect; }
  get rootAbs() { return this.read().rootAbs; }
  get manifest() { return this.read().manifest; }
  get doc() { return this.read().doc; }
  get config() { return this.read().config; }
  get configLossless() { return this.read().configLossless; }
  get parameters() { return this.read().parameters; }
  get childSchemas() { return this.read().childSchemas; }
  get entrypoint() { return this.read().entrypoint; }
  get language() { return this.read().language; }
  get capabilities() { return this.read().capabilities; }
  get limits() { return this.read().limits; }
  get files() { return this.read().files; }
  get fileRequirements() { return this.read().fileRequirements; }
  get pointers() { return this.read().pointers; }
  get locate() { return this.read().locate; }
  get ignores() { return this.read().ignores; }

  toJSON(): Tool {
    return this.read();
  }
}

/**
 * Reads a tool the index vouched for. It was clean and unchanged when the tree was walked, so it
 * must read back as the index recorded it; if not, the tree changed while the check ran.
 */
function readUnchanged(root: string, known: IndexTool, cacheDir: string): Tool {
  const { tool, findings } = readIndexedTool(root, known, cacheDir);
  const same = tool !== undefined && findings.length === 0 && tool.id === known.id && tool.form === known.form && tool.root === known.root && tool.manifestFile === known.source && JSON.stringify(tool.executor) === JSON.stringify(known.executor);
  if (!same) throw new KiwiError("E_IO", `${known.source} changed while kiwi check --staged read the tool tree`, { hint: "run the check again once nothing is writing below .ai/tools" });
  return tool;
}
