// Requirements a tool declares in files of its own rather than in its manifest, as their
// ecosystems write them: a `requirements.txt` or a `package.json` in a directory tool, and PEP 723
// inline metadata (`# /// script` … `# ///`) in a Python script. Pure: discovery reads the files.
import type { NpmOverrides, PackageFileRequirements } from "./model.ts";

/** What a tool's own files declare (the model's type). */
export type FileRequirements = PackageFileRequirements;

/** A line pip takes for a comment as a whole (its COMMENT_RE, matched at the line's start). */
const COMMENT_LINE = /^\s*#/;

/**
 * requirements.txt: one PEP 508 requirement per line; comments, blank lines and line continuations
 * as pip reads them. Options (`-r`, `-e`, `--index-url`, URLs) are refused: a pinned tool names its
 * requirements, and the index comes from the user's pip settings.
 */
export function parseRequirementsTxt(text: string, source: string, out: FileRequirements): void {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    // A requirement continued over lines (`\` at the end, as pip-compile writes its --hash options)
    // is one line, named by the line it starts on. As pip reads it (req_file.join_lines), a comment
    // line continues nothing, even ending in `\` (`# C:\`), and it ends a continuation it meets.
    const at = `${source}:${i + 1}`;
    let raw = lines[i]!;
    while (!COMMENT_LINE.test(raw) && raw.endsWith("\\") && i + 1 < lines.length) {
      const next = lines[++i]!;
      raw = raw.slice(0, -1) + (COMMENT_LINE.test(next) ? ` ${next}` : next);
      if (COMMENT_LINE.test(next)) break;
    }
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") continue;
    if (line.startsWith("-") || /^[a-z+]+:\/\//i.test(line) || line.startsWith(".") || line.startsWith("/")) {
      out.problems.push({ source: at, message: `"${line}" is a pip option, URL or path; kiwi reads requirements only (the index comes from PIP_INDEX_URL)`, hint: optionHint(line) });
      continue;
    }
    out.pypi.push({ spec: line, source: at });
  }
}

/** What to write instead of a pip option, URL or path in requirements.txt. */
function optionHint(line: string): string {
  // -r base.txt, -c constraints.txt: another file, which no pip setting can include.
  if (/^(-r|-c|--requirement|--constraint)\b/.test(line)) return "write the included file's requirements into this one: kiwi reads only the tool's own requirements.txt";
  // --index-url, --extra-index-url, --find-links, --trusted-host, --pre, …: where and how pip looks.
  if (line.startsWith("-") && !/^(-e|--editable)\b/.test(line)) return "move the option to your pip settings (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf), and write one requirement per line";
  // -e ./local, ./pkg, https://…/x.whl: an archive or folder, not a version from an index.
  return "require the distribution by name and version from an index; PIP_FIND_LINKS can name a folder of your own wheels";
}

/** package.json: its `dependencies` (devDependencies are not the tool's run time) and `allowScripts`. */
export function parsePackageJson(text: string, source: string, out: FileRequirements): void {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    out.problems.push({ source, message: `it is not valid JSON (${(error as Error).message})`, hint: "fix the file's JSON syntax: npm cannot read it either" });
    return;
  }
  const deps = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>).dependencies : undefined;
  if (deps === undefined) return;
  if (typeof deps !== "object" || deps === null || Array.isArray(deps) || Object.values(deps).some((v) => typeof v !== "string")) {
    out.problems.push({ source, message: "dependencies must map package names to version ranges", hint: 'write "dependencies": { "<name>": "<range>" }' });
    return;
  }
  const overrides = (doc as Record<string, unknown>).overrides;
  if (overrides !== undefined && !isOverrides(overrides)) {
    out.problems.push({ source, message: "overrides must map package names to versions, or to overrides of their own", hint: 'write "overrides": { "<name>": "<version>" }, or { "<name>": { "<its dependency>": "<version>" } }' });
    return;
  }
  const allowScripts = (doc as Record<string, unknown>).allowScripts;
  if (allowScripts !== undefined && (typeof allowScripts !== "object" || allowScripts === null || Array.isArray(allowScripts))) {
    out.problems.push({ source, message: "allowScripts must map package names to true or false", hint: 'write "allowScripts": { "<name>": true }' });
    return;
  }
  out.npm = {
    dependencies: deps as Record<string, string>,
    ...(overrides !== undefined && Object.keys(overrides).length > 0 ? { overrides } : {}),
    ...(allowScripts ? { allowScripts: allowScripts as Record<string, unknown> } : {}),
    source,
  };
}

/** npm's overrides shape: names to version strings or to nested overrides. */
function isOverrides(value: unknown): value is NpmOverrides {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === "string" || isOverrides(v));
}

/**
 * PEP 723 inline script metadata: the `# /// script` block of a Python script, its lines without
 * the leading `# `, read as TOML; `dependencies` is a list of PEP 508 strings.
 */
export function parseInlineScriptMetadata(text: string, source: string, out: FileRequirements, parseToml: (text: string) => unknown): void {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((l) => /^# \/\/\/ script\s*$/.test(l));
  if (start === -1) return;
  // As uv (and PEP 723's reference regex) reads it: the block is the comment lines that follow
  // (`#` alone, or `# ` and text), and it ends at the last `# ///` among them; a line of code, or a
  // `#text` line, before any `# ///` leaves the block unclosed.
  let end = -1;
  for (let i = start + 1; i < lines.length && (lines[i] === "#" || lines[i]!.startsWith("# ")); i++) if (/^# \/\/\/\s*$/.test(lines[i]!)) end = i;
  if (end === -1) {
    out.problems.push({ source: `${source}:${start + 1}`, message: "the `# /// script` block is never closed with `# ///` (every line up to it must be `#`, or `# ` and text)", hint: "end the block with a line that is exactly `# ///`, and start each line inside it with `# `" });
    return;
  }
  const body = lines.slice(start + 1, end).map((l) => (l.startsWith("# ") ? l.slice(2) : l === "#" ? "" : l)).join("\n");
  let doc: unknown;
  try {
    doc = parseToml(body);
  } catch (error) {
    out.problems.push({ source: `${source}:${start + 1}`, message: `its inline script metadata is not valid TOML (${(error as Error).message})`, hint: "fix the TOML between `# /// script` and `# ///` (each line starts with `# `)" });
    return;
  }
  const deps = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>).dependencies : undefined;
  if (deps === undefined) return;
  if (!Array.isArray(deps) || deps.some((d) => typeof d !== "string")) {
    out.problems.push({ source: `${source}:${start + 1}`, message: "dependencies in the inline script metadata must be a list of strings", hint: 'write dependencies = ["<name><specifier>", ...]' });
    return;
  }
  for (const spec of deps as string[]) out.pypi.push({ spec, source: `${source}:${start + 1}` });
}
