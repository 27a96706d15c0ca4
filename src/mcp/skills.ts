// The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): a skill entry is
// `{uri, frontmatter, resources: [{uri, digest, size}] | "dynamic"}` and every file a host reads
// must match its entry's `sha256:` digest (and size), and a SKILL.md's frontmatter must equal the
// entry's. Pins keep the entries like tools; this module checks entries and files. Pure.
import { parse as parseYaml } from "yaml";
import { sha256Hex } from "../integrity/digest.ts";
import { type CanonicalValue, jsonEqual, toPlain, isMapping } from "../integrity/value.ts";
import { KiwiError } from "../errors.ts";
import { type WireObject } from "./listing.ts";

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** One file of a skill as its entry lists it. */
export interface SkillFileEntry {
  uri: string;
  digest: string;
  size?: number;
}

/** Checks every entry of a skills/list (or skills/get) answer; a malformed one is E_MCP naming it. */
export function checkSkillEntries(entries: readonly WireObject[], label: string): void {
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    checkSkillEntry(entry, label, `skills[${i}]`);
    const uri = entry.uri as string;
    if (seen.has(uri)) throw bad(label, `skills[${i}]`, `lists the skill ${JSON.stringify(uri)} twice`);
    seen.add(uri);
  });
}

/** Checks one skill entry's shape (uri, frontmatter name/description, complete file list). */
export function checkSkillEntry(entry: CanonicalValue, label: string, where: string): asserts entry is WireObject {
  if (!isMapping(entry)) throw bad(label, where, "is not an object");
  const { uri, frontmatter, resources } = entry;
  if (typeof uri !== "string" || !uri.endsWith("/SKILL.md")) throw bad(label, where, `has a uri that does not name a SKILL.md: ${JSON.stringify(uri ?? null)}`);
  if (!isMapping(frontmatter) || typeof frontmatter.name !== "string" || typeof frontmatter.description !== "string") {
    throw bad(label, where, `(${uri}) has no frontmatter with a string name and description`);
  }
  const last = uri.slice(0, -"/SKILL.md".length).split("/").pop();
  if (last !== frontmatter.name) throw bad(label, where, `(${uri}): the skill's folder ${JSON.stringify(last)} is not its frontmatter name ${JSON.stringify(frontmatter.name)}`);
  if (resources === "dynamic") return;
  if (!Array.isArray(resources)) throw bad(label, where, `(${uri}) has no "resources" file list`);
  const root = uri.slice(0, -"SKILL.md".length);
  let hasSkillMd = false;
  const files = new Set<string>();
  resources.forEach((file, j) => {
    const at = `${where}.resources[${j}]`;
    if (!isMapping(file) || typeof file.uri !== "string") throw bad(label, at, `(${uri}) is not a file entry with a uri`);
    if (typeof file.digest !== "string" || !DIGEST.test(file.digest)) throw bad(label, at, `(${file.uri}) has digest ${JSON.stringify(file.digest ?? null)}, not sha256: and 64 lowercase hex digits`);
    if (file.size !== undefined && !(typeof file.size === "number" && Number.isInteger(file.size) && file.size >= 0)) throw bad(label, at, `(${file.uri}) has a size that is not a whole number of bytes`);
    if (!file.uri.startsWith(root) || file.uri.slice(root.length).split("/").some((seg) => seg === ".." || seg === "." || seg === "" || /[\\\0]|%2f|%5c|%00|^%2e/i.test(seg))) {
      throw bad(label, at, `(${file.uri}) lies outside the skill's folder ${root}`);
    }
    if (files.has(file.uri)) throw bad(label, at, `lists ${file.uri} twice`);
    files.add(file.uri);
    if (file.uri === uri) hasSkillMd = true;
  });
  if (!hasSkillMd) throw bad(label, where, `(${uri}) does not list its own SKILL.md among its files`);
}

/** The files an entry lists ("dynamic" skills list none: they cannot be verified). */
export function skillFiles(entry: WireObject): SkillFileEntry[] | "dynamic" {
  if (entry.resources === "dynamic") return "dynamic";
  return (entry.resources as WireObject[]).map((f) => ({ uri: f.uri as string, digest: f.digest as string, ...(typeof f.size === "number" ? { size: f.size } : {}) }));
}

/** What a file read produced, checked against its entry. */
export interface VerifiedFile {
  uri: string;
  digest: string;
  size: number;
  bytes: Uint8Array;
  text?: string;
}

/**
 * Checks one file's bytes against its entry: size, then `sha256:` digest. A mismatch is
 * E_INTEGRITY_MISMATCH naming the file and both digests: the bytes must not be used.
 */
export function verifySkillFile(server: string, skill: string, file: SkillFileEntry, bytes: Uint8Array): VerifiedFile {
  const digest = `sha256:${sha256Hex(bytes)}`;
  if (file.size !== undefined && file.size !== bytes.length) {
    throw new KiwiError("E_INTEGRITY_MISMATCH", `MCP server "${server}": skill file ${file.uri} is ${bytes.length} bytes, but the skill's entry says ${file.size}`, {
      hint: `the file is not what ${skill} lists (tampered, corrupted or stale); it was not used. Review the skill with "kiwi mcp diff ${server}"`,
      details: { server, skill, uri: file.uri, expected: { size: file.size, digest: file.digest }, actual: { size: bytes.length, digest } },
    });
  }
  if (digest !== file.digest) {
    throw new KiwiError("E_INTEGRITY_MISMATCH", `MCP server "${server}": skill file ${file.uri} has digest ${digest}, but the skill's entry says ${file.digest}`, {
      hint: `the file is not what ${skill} lists (tampered, corrupted or stale); it was not used. Review the skill with "kiwi mcp diff ${server}"`,
      details: { server, skill, uri: file.uri, expected: file.digest, actual: digest },
    });
  }
  return { uri: file.uri, digest, size: bytes.length, bytes };
}

/**
 * A SKILL.md's YAML frontmatter must equal the entry's `frontmatter` field by field (SEP-2640):
 * what was approved from the listing is what the model reads. A difference is E_INTEGRITY_MISMATCH.
 */
export function assertFrontmatterMatches(server: string, entry: WireObject, text: string): void {
  const uri = entry.uri as string;
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  let parsed: unknown;
  try {
    parsed = match ? parseYaml(match[1]!) : undefined;
  } catch {
    parsed = undefined;
  }
  const fail = (why: string) =>
    new KiwiError("E_INTEGRITY_MISMATCH", `MCP server "${server}": ${uri} ${why}`, {
      hint: "the SKILL.md says something other than its entry; it was not used",
      details: { server, uri },
    });
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw fail("has no YAML frontmatter");
  const expected = toPlain(entry.frontmatter!) as Record<string, unknown>;
  const actual = parsed as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort();
  const differing = keys.filter((k) => !jsonEqual(expected[k], actual[k]));
  if (differing.length > 0) throw fail(`has frontmatter that differs from its entry in ${differing.join(", ")}`);
}

function bad(label: string, where: string, what: string): KiwiError {
  return new KiwiError("E_MCP", `${label} sent a malformed skill entry: ${where} ${what}`, {
    hint: "the server's skills/list answer does not follow SEP-2640; report it to the server's author",
    details: { where },
  });
}
