// Agent Skills (agentskills.io/specification): a folder whose SKILL.md opens with YAML front matter
// (name, description; optional license, compatibility, metadata, allowed-tools). kiwi reads one as
// a knowledge tool whose entry point is SKILL.md, so every file of the folder is hashed and locked.
// Pure: the parsed front matter and the body in, the kiwi manifest and problems out.
import type { CanonicalValue } from "../integrity/value.ts";
import { isRecord, toPlain } from "../integrity/value.ts";

/** The file that makes a folder a skill. */
export const SKILL_FILE = "SKILL.md";

/** The spec's name rule: 1-64 lower-case letters, digits and single hyphens, not at either end. */
const SKILL_NAME = /^[a-z0-9](?:[a-z0-9]|-(?!-))*$/;
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const KNOWN_FIELDS = new Set(["name", "description", "license", "compatibility", "metadata", "allowed-tools"]);

/** A problem with a skill, at a JSON pointer of its front matter ("" for the file). */
export interface SkillProblem {
  rule: "skill/name" | "skill/description" | "skill/field" | "skill/path-escape";
  /** Only where this problem is milder than its rule says (an unknown field); else the rule table's. */
  severity?: "warning";
  pointer: string;
  message: string;
  hint: string;
  /** 1-based line in SKILL.md, for problems found in the body. */
  line?: number;
}

export interface SkillManifest {
  /** The kiwi manifest the skill stands for (hashed as the tool's manifest; SKILL.md is hashed as a file). */
  manifest: { [key: string]: CanonicalValue };
  problems: SkillProblem[];
  /** Where each kiwi field lives in the front matter, for findings. */
  pointers: Record<string, string>;
}

/**
 * Maps a skill's front matter (as parsed, lossless) to a kiwi knowledge manifest, checking it
 * against the Agent Skills spec and the folder it sits in.
 */
/**
 * Front-matter fields Claude Code reads in a skill of a Claude Code plugin, beside the Agent Skills
 * ones (code.claude.com/docs/en/skills): known there, so no warning; not kept in the manifest.
 */
const CLAUDE_CODE_FIELDS = new Set(["argument-hint", "disable-model-invocation", "user-invocable", "model", "context", "agent", "hooks"]);

export function skillManifest(frontMatter: CanonicalValue, folder: string, body: string, bodyFirstLine: number, options: { claudeCode?: boolean } = {}): SkillManifest {
  const problems: SkillProblem[] = [];
  const doc = toPlain(frontMatter);
  const fm: Record<string, unknown> = isRecord(doc) ? doc : {};
  const name = fm.name;
  if (name === undefined) problems.push({ rule: "skill/name", pointer: "", message: "the front matter has no name", hint: `add name: ${folder} (a skill's name is its folder's name)` });
  else if (typeof name !== "string" || name.length === 0 || name.length > 64 || !SKILL_NAME.test(name)) {
    problems.push({ rule: "skill/name", pointer: "/name", message: `name ${JSON.stringify(name)} is not a skill name`, hint: "1-64 lower-case letters, digits and hyphens, no hyphen at either end or twice in a row" });
  } else if (name !== folder) {
    problems.push({ rule: "skill/name", pointer: "/name", message: `name "${name}" does not match the skill's folder "${folder}"`, hint: `rename the folder to ${name}, or set name: ${folder}` });
  }
  const description = fm.description;
  if (typeof description !== "string" || description.trim() === "") {
    problems.push({ rule: "skill/description", pointer: description === undefined ? "" : "/description", message: description === undefined ? "the front matter has no description" : "description is not a non-empty string", hint: "say what the skill does and when to use it, in at most 1024 characters" });
  } else if (description.length > 1024) {
    problems.push({ rule: "skill/description", pointer: "/description", message: `description is ${description.length} characters; the spec allows 1024`, hint: "shorten it; put the detail in the body of SKILL.md" });
  }
  const metadata = fm.metadata;
  if (metadata !== undefined && (!isRecord(metadata) || Object.values(metadata).some((v) => typeof v !== "string"))) {
    problems.push({ rule: "skill/field", pointer: "/metadata", message: "metadata is not a mapping of strings to strings", hint: 'quote the values: version: "1.0"' });
  }
  for (const key of ["license", "compatibility", "allowed-tools"]) {
    // Claude Code also takes allowed-tools as a list of tool names.
    const listed = key === "allowed-tools" && options.claudeCode && Array.isArray(fm[key]) && (fm[key] as unknown[]).every((t) => typeof t === "string");
    if (fm[key] !== undefined && typeof fm[key] !== "string" && !listed) problems.push({ rule: "skill/field", pointer: `/${key}`, message: `${key} is not a string`, hint: key === "allowed-tools" ? "list the tools space-separated in one string: Bash(git:*) Read" : `write ${key} as one string` });
  }
  if (typeof fm.compatibility === "string" && fm.compatibility.length > 500) problems.push({ rule: "skill/field", pointer: "/compatibility", message: `compatibility is ${fm.compatibility.length} characters; the spec allows 500`, hint: "shorten it" });
  for (const key of Object.keys(fm)) if (!KNOWN_FIELDS.has(key) && !(options.claudeCode && CLAUDE_CODE_FIELDS.has(key))) problems.push({ rule: "skill/field", severity: "warning", pointer: `/${key}`, message: `${key} is not an Agent Skills field`, hint: "put your own fields under metadata" });
  problems.push(...escapingLinks(body, bodyFirstLine));

  const version = isRecord(metadata) && typeof metadata.version === "string" && SEMVER.test(metadata.version) ? metadata.version : "0.0.0";
  const lossless = isRecord(frontMatter) ? (frontMatter as { [key: string]: CanonicalValue }) : {};
  const skill: { [key: string]: CanonicalValue } = {};
  for (const key of ["license", "compatibility", "allowed-tools", "metadata"]) if (lossless[key] !== undefined) skill[key] = lossless[key]!;
  const manifest: { [key: string]: CanonicalValue } = {
    tool_id: typeof name === "string" && name !== "" ? name : folder,
    tool_type: "knowledge",
    version,
    ...(typeof description === "string" ? { description } : {}),
    executor: null,
    config: { entrypoint: SKILL_FILE, ...(Object.keys(skill).length > 0 ? { skill } : {}) },
  };
  return { manifest, problems, pointers: { "/tool_id": "/name", "/description": "/description", "/version": "/metadata/version", "/config/skill": "" } };
}

/**
 * Relative links and images in the body whose target leaves the skill's folder (`../x`, an
 * absolute path): a skill's files are its folder's files, and kiwi locks nothing outside it.
 */
export function escapingLinks(body: string, firstLine: number): SkillProblem[] {
  const out: SkillProblem[] = [];
  body.split("\n").forEach((line, i) => {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!.split("#")[0]!.split("?")[0]!;
      if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      if (leavesFolder(target)) {
        out.push({ rule: "skill/path-escape", pointer: "", line: firstLine + i, message: `the link ${JSON.stringify(m[1])} points outside the skill's folder`, hint: "copy the file into the skill (scripts/, references/, assets/) and link it with a relative path" });
      }
    }
  });
  return out;
}

/** True when a relative path, resolved against the folder, leaves it (or is absolute). */
export function leavesFolder(path: string): boolean {
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(path)) return true;
  let depth = 0;
  for (const segment of path.split(/[\\/]/)) {
    if (segment === "..") depth--;
    else if (segment !== "." && segment !== "") depth++;
    if (depth < 0) return true;
  }
  return false;
}
