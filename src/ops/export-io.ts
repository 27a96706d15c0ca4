// `kiwi export`: finds the tools, plans the files (formats/export-plan.ts) and writes them under --out, staged
// beside the target and moved into place with one rename, never over something that exists.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import type { Context } from "../context.ts";
import { KiwiError } from "../errors.ts";
import { readProject } from "../manifest/discover-io.ts";
import { suggest } from "../resolve/suggest.ts";
import { checkProject } from "../validate/check-project.ts";
import { EXPORT_FORMATS, type ExportFormat, exportPlugin, exportServerJson, exportSkill } from "../formats/export-plan.ts";

export interface ExportResult {
  format: ExportFormat;
  tools: string[];
  /** Absolute path of the written folder (or server.json). */
  path: string;
  files: string[];
  notes: string[];
}

/** Writes `toolIds` in `format` under `out`; `name` is the plugin's or the registry name. */
export function exportTools(ctx: Context, toolIds: string[], format: string, out: string, name: string | undefined): ExportResult {
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw new KiwiError("E_USAGE", `--format ${JSON.stringify(format)} is not one of ${EXPORT_FORMATS.join(", ")}`, { hint: "kiwi export <tool> --format skill --out <dir>" });
  const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
  const tools = toolIds.map((id) => {
    const tool = project.tools.find((t) => t.id === id && t.form !== "builtin");
    if (!tool) {
      const near = suggest(id, project.tools.map((t) => t.id));
      throw new KiwiError("E_TOOL_NOT_FOUND", `no project tool has the id "${id}"`, { hint: near ? `did you mean "${near}"?` : 'run "kiwi list" to see the project tools' });
    }
    return tool;
  });
  if (format !== "plugin" && tools.length !== 1) throw new KiwiError("E_USAGE", `--format ${format} exports one tool, not ${tools.length}`, { hint: "export several tools together with --format plugin" });
  const read = (abs: string) => readFileSync(abs, "utf8");
  const plan =
    format === "skill" ? exportSkill(tools[0]!, read) : format === "server.json" ? exportServerJson(tools[0]!, name ?? `local/${tools[0]!.id}`) : exportPlugin(tools, name ?? tools[0]!.id.replace(/_/g, "-"), read);
  // What kiwi would not lock it does not hand to another client either (as npm publish refuses an
  // invalid package); asked after the plan, so a tool the format cannot hold is told so first.
  const errors = checkProject(project, { only: tools.map((t) => t.id) }).findings.filter((f) => f.severity === "error");
  if (errors.length > 0) {
    const failing = tools.map((t) => t.id).filter((id) => errors.some((f) => f.tool === id));
    const named = failing.length > 0 ? failing : tools.map((t) => t.id);
    throw new KiwiError("E_CHECK_FAILED", `${named.join(", ")} ${named.length === 1 ? "does" : "do"} not pass kiwi check: ${errors.map((f) => `${f.file}${f.line ? `:${f.line}` : ""} ${f.rule}: ${f.message}`).join("; ")}`, {
      hint: `nothing was written; run "kiwi check ${named.join(" ")}" and fix the errors`,
      details: { tools: named, findings: errors },
    });
  }
  if (format === "server.json" && name === undefined) plan.notes.push(`the server is named local/${tools[0]!.id}: pass --name io.github.<owner>/<server> before publishing it`);
  const outAbs = resolve(ctx.cwd, out);
  const target = join(outAbs, plan.name);
  if (existsSync(target)) throw new KiwiError("E_USAGE", `${target} already exists`, { hint: "remove it, or choose another --out", details: { path: target } });
  mkdirSync(outAbs, { recursive: true });
  const stage = join(outAbs, `.kiwi-export-${randomBytes(6).toString("hex")}`);
  try {
    if (format === "server.json") {
      writeFileSync(stage, plan.files[0]!.text!);
    } else {
      for (const file of plan.files) {
        const dest = join(stage, ...file.path.split("/"));
        mkdirSync(dirname(dest), { recursive: true });
        if (file.text !== undefined) writeFileSync(dest, file.text);
        else copyFileSync(file.from!, dest);
        if (file.executable) chmodSync(dest, 0o755);
      }
    }
    renameSync(stage, target);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return { format: format as ExportFormat, tools: tools.map((t) => t.id), path: target, files: plan.files.map((f) => f.path), notes: plan.notes.map((n) => n) };
}

