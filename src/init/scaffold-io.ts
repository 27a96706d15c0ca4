// Writes the `kiwi init` scaffold. Each file is created with link(2) from a temp file, which is
// atomic and fails if the name exists, so a file that appears meanwhile is still never replaced.
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readProject } from "../manifest/discover-io.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";
import { type ExistingTree, type ScaffoldPlan, planScaffold } from "./scaffold-plan.ts";
import { TEMPLATES, type Template } from "./templates.ts";

export interface ScaffoldResult extends ScaffoldPlan {
  /** Absolute project root the scaffold was written to. */
  root: string;
  /** Project-relative paths created, folders with a trailing `/`. */
  created: string[];
}

/** Writes every missing example tool below `root`/.ai/tools/ and reports what it created and skipped. */
export function writeScaffold(root: string, templates: readonly Template[] = TEMPLATES): ScaffoldResult {
  const plan = planScaffold(templates, readExistingTree(root, templates));
  const created: string[] = [];
  if (!existsSync(join(root, TOOLS_DIR))) created.push(".ai/tools/");
  const skip = [...plan.skip];
  const written: Template[] = [];
  for (const template of plan.write) {
    const abs = join(root, template.path);
    mkdirSync(dirname(abs), { recursive: true });
    if (createExclusive(abs, template.content, template.mode)) {
      created.push(template.path);
      written.push(template);
    } else skip.push({ path: template.path, reason: "already exists", kept: true });
  }
  return { root, created, write: written, skip };
}

function readExistingTree(root: string, templates: readonly Template[]): ExistingTree {
  const paths = new Set(templates.map((t) => t.path).filter((p) => pathExists(join(root, p))));
  const toolIds = new Map<string, string>();
  // Only this folder's own tools count: an ancestor project is a different project.
  if (existsSync(join(root, TOOLS_DIR))) {
    for (const tool of readProject(root).tools) if (tool.form !== "builtin") toolIds.set(tool.id, tool.manifestFile);
  }
  return { paths, toolIds };
}

function pathExists(abs: string): boolean {
  try {
    lstatSync(abs);
    return true;
  } catch {
    return false;
  }
}

/** Creates `abs` with `content` unless it exists; true when it was created. */
function createExclusive(abs: string, content: string, mode: number): boolean {
  const temp = `${abs}.kiwi-init-${process.pid}.tmp`;
  writeFileSync(temp, content, { mode });
  chmodSync(temp, mode);
  try {
    linkSync(temp, abs);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // File systems without hard links: O_EXCL still never replaces, though a crash may leave a partial file.
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "EXDEV") return createWithExcl(abs, content, mode);
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

function createWithExcl(abs: string, content: string, mode: number): boolean {
  try {
    writeFileSync(abs, content, { mode, flag: "wx" });
    chmodSync(abs, mode);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}
