// `kiwi add --from <file>`: reads a server.json (or an .mcpb bundle, a SKILL.md folder), writes the
// kiwi tool it maps to under .ai/tools/, and checks it with its chain. Nothing of the OCI path is
// used. If the new tool does not pass `kiwi check`, what was written is removed again.
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import YAML from "yaml";
import { writeFileAtomic } from "../cache/atomic-io.ts";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import type { Finding } from "../findings.ts";
import { readProject, toProjectPath } from "../manifest/index.ts";
import { checkProject } from "../validate/index.ts";
import { importError } from "./errors.ts";
import { importServerJson, type ServerJsonImportOptions } from "./server-json.ts";

export interface ImportResult {
  tool: string;
  version: string;
  /** What was imported: `server.json` and the entry it came from. */
  format: "server.json";
  source: string;
  /** Project-relative path of the written manifest. */
  path: string;
  notes: string[];
  /** Warnings `kiwi check` found on the new tool (errors refuse the import). */
  findings: Finding[];
}

const MAX_SERVER_JSON_BYTES = 1024 * 1024;

/** Imports `file` into the project around ctx.cwd. */
export async function importFromFile(ctx: Context, file: string, options: ServerJsonImportOptions): Promise<ImportResult> {
  const abs = resolve(ctx.cwd, file);
  if (!existsSync(abs)) throw new KiwiError("E_INPUT_INVALID", `${file} does not exist`, { hint: "pass the path of a server.json", details: { file } });
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const doc = readJsonFile(abs, file);
  const imported = importServerJson(doc, file, options);
  if (imported.mcpb) throw importError(file, imported.mcpb.pointer, "MCPB packages are not imported from a server.json yet", "pick another entry with --pick npm|pypi|remote");
  const existing = project.tools.find((t) => t.id === imported.id && t.form !== "builtin");
  const target = join(project.toolsDir, `${imported.id}.yaml`);
  if (existing || existsSync(target)) {
    throw new KiwiError("E_USAGE", `a tool named ${imported.id} already exists${existing ? ` (${existing.manifestFile})` : ""}`, { hint: "pass --id <another id>, or remove the existing tool first", details: { tool: imported.id } });
  }
  const header = `# Imported by kiwi add --from ${basename(file)}: ${imported.server.name} ${imported.server.version} (${imported.source})\n`;
  writeFileAtomic(target, header + YAML.stringify(imported.manifest, { lineWidth: 0 }));
  const path = toProjectPath(project.root, target);
  const checked = checkProject(readProject(ctx.cwd, { cacheDir: ctx.cacheDir }), { only: [path] });
  const errors = checked.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) {
    rmSync(target, { force: true });
    throw new KiwiError("E_CHECK_FAILED", `the tool imported from ${file} does not pass kiwi check: ${errors.map((f) => `${f.rule}: ${f.message}`).join("; ")}`, {
      hint: "nothing was written; fix the server.json or write the manifest by hand",
      details: { file, findings: errors },
    });
  }
  return { tool: imported.id, version: String(imported.manifest.version), format: "server.json", source: imported.source, path, notes: imported.notes, findings: checked.findings.filter((f) => f.severity !== "error") };
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

