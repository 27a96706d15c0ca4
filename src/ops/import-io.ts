// `kiwi add --from <file>`: reads a server.json or an .mcpb bundle, writes the
// kiwi tool it maps to under .ai/tools/, and checks it with its chain. Nothing of the OCI path is
// used. If the new tool does not pass `kiwi check`, what was written is removed again.
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, join, resolve } from "node:path";
import YAML from "yaml";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings/verdict.ts";
import { readProject } from "../manifest/discover-io.ts";
import { toProjectPath } from "../manifest/project-io.ts";
import { IGNORED_NAMES } from "../integrity/tool-path.ts";
import { PLUGIN_FILE, checkPluginManifest } from "../manifest/plugin.ts";
import { CLAUDE_MARKETPLACE_FILE, CLAUDE_PLUGIN_FILE, checkClaudePluginManifest } from "../manifest/claude-plugin.ts";
import { SKILL_FILE } from "../manifest/skill.ts";
import { checkProject } from "../validate/check-project.ts";
import { commentText, importError } from "../formats/import-errors.ts";
import { type BundleSignature, type PlacedBundle, placeBundle } from "../formats/mcpb-io.ts";
import { type McpbFetch, importServerJson, type ServerJsonImportOptions } from "../formats/server-json.ts";

export interface ImportResult {
  tool: string;
  version: string;
  /** What was imported: an MCP registry server.json or an MCP bundle. */
  format: "server.json" | "mcpb" | "skill" | "plugin";
  /** The entry it came from: `npm:<name>@<version>`, `pypi:<name>==<version>`, a remote URL, `mcpb:<url or file>`. */
  source: string;
  /** Project-relative path of the written manifest (or folder). */
  path: string;
  /** For a plugin folder: the tools it holds (its skills and MCP servers). */
  tools?: string[];
  /** For a bundle: whether it is signed, self-signed or unsigned, and by whom; and its sha256. */
  signature?: BundleSignature;
  sha256?: string;
  notes: string[];
  /** Warnings `kiwi check` found on the new tool (errors refuse the import). */
  findings: Finding[];
}

const MAX_SERVER_JSON_BYTES = 1024 * 1024;
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

/** Imports `file` (a server.json, or an .mcpb bundle) into the project around ctx.cwd. */
export async function importFromFile(ctx: Context, file: string, options: ServerJsonImportOptions): Promise<ImportResult> {
  const abs = resolve(ctx.cwd, file);
  if (!existsSync(abs)) throw new KiwiError("E_INPUT_INVALID", `${file} does not exist`, { hint: "pass the path of a server.json or an .mcpb bundle", details: { file } });
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const taken = new Set(project.tools.filter((t) => t.form !== "builtin").map((t) => t.id));
  if (statSync(abs).isDirectory()) return importFolder(ctx, project.root, project.toolsDir, abs, file, options, taken);
  // The id kiwi makes from a registry or bundle name must not replace a built-in either: an MCP
  // server named python_runtime would silently become the runtime of every Python tool.
  const takenOrBuiltin = new Set(project.tools.map((t) => t.id));
  const head = readFileSync(abs).subarray(0, 4);
  if (file.toLowerCase().endsWith(".mcpb") || ZIP_MAGIC.every((b, i) => head[i] === b)) {
    if (options.pick !== undefined) throw new KiwiError("E_USAGE", "--pick goes with a server.json, not a bundle", { hint: `kiwi add --from ${file}` });
    const placed = placeBundle(project.root, project.toolsDir, new Uint8Array(readFileSync(abs)), file, { id: options.id, env: ctx.env, takenIds: takenOrBuiltin });
    return checkPlaced(ctx, project.root, placed, `mcpb:${file}`, []);
  }
  const doc = readJsonFile(abs, file);
  const imported = importServerJson(doc, file, options);
  if (imported.mcpb) {
    const bytes = await downloadBundle(imported.mcpb, file);
    const placed = placeBundle(project.root, project.toolsDir, bytes, imported.mcpb.url.split("/").pop() || "bundle.mcpb", { id: imported.id, env: ctx.env, takenIds: takenOrBuiltin });
    mergeServerJsonInputs(join(placed.dir, "tool.yaml"), imported.manifest);
    return checkPlaced(ctx, project.root, placed, imported.source, imported.notes);
  }
  const existing = project.tools.find((t) => t.id === imported.id);
  const target = join(project.toolsDir, `${imported.id}.yaml`);
  if (existing || existsSync(target)) {
    const where = existing === undefined ? "" : existing.form === "builtin" ? " (built into kiwi)" : ` (${existing.manifestFile})`;
    throw new KiwiError("E_USAGE", `a tool named ${imported.id} already exists${where}`, { hint: "pass --id <another id>, or remove the existing tool first", details: { tool: imported.id } });
  }
  const header = `# ${commentText(`Imported by kiwi add --from ${basename(file)}: ${imported.server.name} ${imported.server.version} (${imported.source})`)}\n`;
  writeFileAtomic(target, header + YAML.stringify(imported.manifest, { lineWidth: 0 }));
  const path = toProjectPath(project.root, target);
  const findings = checkOrRemove(ctx, path, file, () => rmSync(target, { force: true }));
  return { tool: imported.id, version: String(imported.manifest.version), format: "server.json", source: imported.source, path, notes: imported.notes, findings };
}

/**
 * A skill folder (SKILL.md) or an Agent Plugin folder (plugin.json, or a Claude Code plugin's
 * .claude-plugin/plugin.json) copied into .ai/tools/ as it
 * is: discovery reads it (manifest/skill.ts, plugin.ts), and kiwi check judges it before it stays.
 */
function importFolder(ctx: Context, root: string, toolsDir: string, abs: string, file: string, options: ServerJsonImportOptions, taken: ReadonlySet<string>): ImportResult {
  const claude = !existsSync(join(abs, SKILL_FILE)) && !existsSync(join(abs, PLUGIN_FILE)) && existsSync(join(abs, CLAUDE_PLUGIN_FILE));
  const kind = existsSync(join(abs, SKILL_FILE)) ? "skill" : existsSync(join(abs, PLUGIN_FILE)) || claude ? "plugin" : undefined;
  if (!kind && existsSync(join(abs, CLAUDE_MARKETPLACE_FILE))) {
    const plugins = marketplacePlugins(join(abs, CLAUDE_MARKETPLACE_FILE));
    throw new KiwiError("E_INPUT_INVALID", `${file} is a Claude Code marketplace (${CLAUDE_MARKETPLACE_FILE}), a catalog of plugins, not one plugin`, { hint: `pass the folder of one of its plugins${plugins.length > 0 ? `: ${plugins.map((p) => join(file, p)).join(", ")}` : ""}`, details: { file } });
  }
  if (!kind) throw new KiwiError("E_INPUT_INVALID", `${file} is a folder with neither SKILL.md nor plugin.json (nor ${CLAUDE_PLUGIN_FILE})`, { hint: "pass a skill folder, an Agent Plugin or Claude Code plugin folder, a server.json or an .mcpb bundle", details: { file } });
  if (options.pick !== undefined || options.id !== undefined) throw new KiwiError("E_USAGE", `--pick and --id do not apply to a ${kind} folder`, { hint: kind === "skill" ? "a skill's id is its name, which must be its folder's name" : "a plugin's tools are named by its skills and servers" });
  const name = basename(abs);
  const dir = join(toolsDir, name);
  if (existsSync(dir) || (kind === "skill" && taken.has(name))) throw new KiwiError("E_USAGE", `.ai/tools/${name} already exists`, { hint: "remove the existing tool first", details: { tool: name } });
  const stage = join(root, ".ai", ".kiwi-tmp", `folder-${randomBytes(6).toString("hex")}`);
  try {
    // The folder a link names is copied (skills are often linked in from one checkout), not the
    // link, which discovery would not follow. Links inside it are copied as links: discovery
    // refuses one that leaves the tool (security/symlink-escape).
    cpSync(realpathSync(abs), stage, { recursive: true, verbatimSymlinks: true, filter: (src) => !IGNORED_NAMES.has(basename(src)) });
    renameSync(stage, dir);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  const path = toProjectPath(root, dir);
  const findings = checkOrRemove(ctx, path, file, () => rmSync(dir, { recursive: true, force: true }));
  const tools = readProject(ctx.cwd, { cacheDir: ctx.cacheDir }).tools.filter((t) => t.root === path || t.root.startsWith(`${path}/`));
  // A plugin's version is its plugin.json's (its skills carry their own); a skill's is the tool's.
  const version = kind === "plugin" ? pluginVersion(join(dir, claude ? CLAUDE_PLUGIN_FILE : PLUGIN_FILE), claude) : (tools[0]?.version ?? "0.0.0");
  return { tool: kind === "plugin" ? name : (tools[0]?.id ?? name), version, format: kind, source: file, path, tools: tools.map((t) => t.id), notes: [], findings };
}

/** The local plugin folders a marketplace.json lists (`source: "./plugins/x"`), for a hint. */
function marketplacePlugins(file: string): string[] {
  try {
    const doc = JSON.parse(readFileSync(file, "utf8")) as { plugins?: { source?: unknown }[] };
    return (Array.isArray(doc.plugins) ? doc.plugins : []).map((p) => p?.source).filter((s): s is string => typeof s === "string" && s.startsWith("./") && !s.includes("..")).slice(0, 5);
  } catch {
    return [];
  }
}

/** plugin.json's version as the components read it (manifest/plugin.ts): semver, else 0.0.0. */
function pluginVersion(file: string, claude: boolean): string {
  try {
    const value = JSON.parse(readFileSync(file, "utf8"));
    return (claude ? checkClaudePluginManifest(value) : checkPluginManifest(value)).version;
  } catch {
    return "0.0.0";
  }
}

function checkPlaced(ctx: Context, root: string, placed: PlacedBundle, source: string, notes: string[]): ImportResult {
  const path = toProjectPath(root, join(placed.dir, "tool.yaml"));
  const findings = checkOrRemove(ctx, path, source, () => rmSync(placed.dir, { recursive: true, force: true }));
  return { tool: placed.id, version: placed.version, format: "mcpb", source, path, signature: placed.signature, sha256: placed.sha256, notes: [...notes, ...placed.notes], findings };
}

/** Runs kiwi check on the new tool; on an error, removes what was written and refuses. */
function checkOrRemove(ctx: Context, path: string, from: string, remove: () => void): Finding[] {
  const checked = checkProject(readProject(ctx.cwd, { cacheDir: ctx.cacheDir }), { only: [path] });
  const errors = checked.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) {
    remove();
    throw new KiwiError("E_CHECK_FAILED", `the tool imported from ${from} does not pass kiwi check: ${errors.map((f) => `${f.rule}: ${f.message}`).join("; ")}`, {
      hint: "nothing was written; fix the source or write the manifest by hand",
      details: { file: from, findings: errors },
    });
  }
  return checked.findings.filter((f) => f.severity !== "error");
}

/** Downloads an MCPB package named by a server.json and checks it against fileSha256 before anything is unpacked. */
async function downloadBundle(mcpb: McpbFetch, file: string): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetch(mcpb.url, { redirect: "follow", signal: AbortSignal.timeout(120_000) });
  } catch (error) {
    throw new KiwiError("E_IO", `${file}: cannot download ${mcpb.url}: ${(error as Error).message}`, { hint: "check the URL and your network", details: { file, url: mcpb.url } });
  }
  if (!response.ok) throw new KiwiError("E_IO", `${file}: ${mcpb.url} answered HTTP ${response.status}`, { hint: "check the package's identifier URL", details: { file, url: mcpb.url } });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== mcpb.sha256) {
    throw new KiwiError("E_INTEGRITY_MISMATCH", `${file} at ${mcpb.pointer}/fileSha256: ${mcpb.url} has sha256 ${actual}, not ${mcpb.sha256}`, { hint: "the file changed since the server.json was published: do not use it", details: { file, field: `${mcpb.pointer}/fileSha256`, expected: mcpb.sha256, actual } });
  }
  return bytes;
}

/** server.json's environment variables and arguments for an MCPB package, added to the bundle's own. */
function mergeServerJsonInputs(toolYaml: string, fromServerJson: Record<string, unknown>): void {
  const extra = fromServerJson.config as Record<string, unknown>;
  if (extra.env === undefined && extra.args === undefined) return;
  const text = readFileSync(toolYaml, "utf8");
  const header = text.slice(0, text.indexOf("\n") + 1);
  const doc = YAML.parse(text) as { config: Record<string, unknown> };
  const config = doc.config;
  if (extra.env) config.env = { ...(extra.env as Record<string, string>), ...((config.env as Record<string, string>) ?? {}) };
  if (extra.args) config.args = [...((config.args as string[]) ?? []), ...(extra.args as string[])];
  if (extra.secrets) config.secrets = [...new Set([...((config.secrets as string[]) ?? []), ...(extra.secrets as string[])])].sort();
  writeFileAtomic(toolYaml, header + YAML.stringify(doc, { lineWidth: 0 }));
}

function readJsonFile(abs: string, file: string): unknown {
  if (statSync(abs).size > MAX_SERVER_JSON_BYTES) throw importError(file, "", `the file is larger than ${MAX_SERVER_JSON_BYTES} bytes`, "a server.json is a small JSON document");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(abs));
  } catch {
    throw importError(file, "", "the file is not UTF-8 text", "pass a server.json");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw importError(file, "", `invalid JSON: ${(error as Error).message}`, "pass a server.json (a JSON object)");
  }
}

