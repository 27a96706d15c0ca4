// Decides what `kiwi init` writes, from what already exists. Pure: it never touches the disk, so
// "never overwrite" is a property of this function and tested as one.
import type { Template } from "./templates.ts";

export interface ScaffoldSkip {
  path: string;
  /** Why the template was not written, for the stderr note. */
  reason: string;
  /** Whether something is at `path` (kept as it is); false when the template's tool id is defined elsewhere and nothing is there. */
  kept: boolean;
}

export interface ScaffoldPlan {
  write: Template[];
  skip: ScaffoldSkip[];
}

export interface ExistingTree {
  /** Project-relative paths that exist (files, folders, links, anything). */
  paths: ReadonlySet<string>;
  /** Tool ids the project already defines, with the file that defines each. */
  toolIds: ReadonlyMap<string, string>;
}

/** Keeps every template whose path is free and whose tool id the project does not define yet. */
export function planScaffold(templates: readonly Template[], existing: ExistingTree): ScaffoldPlan {
  const plan: ScaffoldPlan = { write: [], skip: [] };
  for (const template of templates) {
    const owner = existing.toolIds.get(template.toolId);
    if (existing.paths.has(template.path)) plan.skip.push({ path: template.path, reason: "already exists", kept: true });
    else if (owner !== undefined) plan.skip.push({ path: template.path, reason: `the tool id "${template.toolId}" is already defined by ${owner}`, kept: false });
    else plan.write.push(template);
  }
  return plan;
}
