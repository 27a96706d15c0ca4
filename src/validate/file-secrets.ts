// security/secret-literal on the lines of a tool's files, the pure half: a key written into a
// script, a helper or a config is committed with the tool as surely as one in its manifest.
// Which files are read (every file of each tool in scope, up to a size), and how what was found
// in them becomes findings and ignore comments; file-secrets-io.ts reads the files. A manifest's
// own values keep their findings from security.ts, which name the field: a line that has one is
// not reported again. Pure.
import type { FileIdentity } from "../cache/stat-cache-io.ts";
import type { Finding } from "../findings/verdict.ts";
import { fileFinding, fileOnDisk } from "../findings/finding.ts";
import { type Tool, manifestPathOf } from "../manifest/model.ts";
import { type ManifestSyntax, syntaxOf } from "../manifest/forms.ts";
import type { IgnoreDirective } from "../manifest/ignore-comments.ts";
import { type CredentialHit, PUBLISHED_WITH_IT, credentialNoun, publishedExampleHint, publishedSecretHint } from "./credentials.ts";
import type { IgnoreComments } from "./ignores.ts";
import { type RemoteRecords, isPublished, toolPath } from "./layer.ts";

/** Files larger than this are not read (a data file, a bundle): gitleaks' default cap is of this order. */
export const MAX_SCANNED_BYTES = 1024 * 1024;

/** One file to read. */
export interface FileScanRequest {
  tool: string;
  /** Project-relative path, for findings. */
  file: string;
  abs: string;
  /** Undefined when discovery did not list the file (a tool read through the lock index): the reader stats it. */
  identity: FileIdentity | undefined;
  /**
   * The tool's manifest file (its syntax): its ignore comments inside the manifest are the
   * manifest's own, read by its parser (a `# kiwi-ignore` shown in a block scalar is text), so only
   * those outside it (a script's code, a document's body) are read as text.
   */
  manifest?: ManifestSyntax;
  /**
   * The tool was pulled from a registry (layer.ts isPublished): its files are not
   * committed here and cannot be changed or carry a comment of the consumer's (their integrity is
   * pinned), so what they hold is the publisher's to fix: said, but no error.
   */
  remote?: true;
}

/** What one file holds: credentials, and its ignore comments (a manifest's: those outside the manifest). */
export interface FileScan {
  hits: CredentialHit[];
  ignores: IgnoreDirective[];
}

/**
 * The files of the tools in scope to read, tool by tool, each file once (an Agent Plugin's servers
 * share the plugin's files): built-in tools have none, and a file past MAX_SCANNED_BYTES is left out.
 * `remoteRecords`: what the lockfile records of remote tools, when the caller read it (isPublished).
 */
export function planFileScans(tools: readonly Tool[], remoteRecords?: RemoteRecords): FileScanRequest[] {
  const out: FileScanRequest[] = [];
  const seen = new Set<string>();
  for (const tool of tools) {
    if (tool.form === "builtin") continue;
    const manifest = manifestPathOf(tool.manifestFile);
    const syntax = syntaxOf(manifest);
    const remote = isPublished(tool, remoteRecords);
    const add = (file: string, abs: string, identity: FileIdentity | undefined) => {
      if (seen.has(file)) return;
      seen.add(file);
      const request: FileScanRequest = { tool: tool.id, file, abs, identity };
      if (file === manifest && syntax) request.manifest = syntax;
      if (remote) request.remote = true;
      out.push(request);
    };
    // A directory tool's manifest (or a single YAML file's) is not among its files.
    if (!tool.files.some((f) => toolPath(tool, f.path) === manifest) && manifest.startsWith(`${tool.root}/`)) add(manifest, `${tool.rootAbs}${manifest.slice(tool.root.length)}`, tool.manifestStat);
    for (const f of tool.files) {
      if (f.size > MAX_SCANNED_BYTES) continue;
      // The file itself is its identity (a ToolFile has the fields): nothing is copied per file.
      add(toolPath(tool, f.path), f.abs, f);
    }
  }
  return out;
}

const HINT = 'remove it, revoke it if it was ever committed or pushed, and have the tool read it from its environment: a "${NAME}" reference in config.env, NAME set where kiwi runs';

/** The hint, with the way past a published example: a comment on its line, or in JSON (which has none) an entry of the ignore file. */
function hintFor(file: string, line: number): string {
  const comment = syntaxOf(file) === "json" ? undefined : "a comment holding kiwi-ignore: security/secret-literal -- <why>";
  return `${HINT}; ${publishedExampleHint(comment, `file: ${file}, line: ${line}`)}`;
}

/**
 * The findings of what the files hold, and their ignore comments for the check to apply. `already`
 * is what the check reported so far (kept and ignored findings): a credential on the lines of a
 * manifest value the manifest's own check reported (`tools` say where each value ends) is that
 * finding, not another.
 */
export function fileSecretFindings(
  requests: readonly FileScanRequest[],
  scans: ReadonlyMap<string, FileScan>,
  already: readonly Finding[],
  tools: readonly Pick<Tool, "id" | "manifestFile" | "locate">[],
): { findings: Finding[]; ignoreComments: IgnoreComments[] } {
  const reported = reportedLines(already, tools);
  const findings: Finding[] = [];
  const ignoreComments: IgnoreComments[] = [];
  for (const request of requests) {
    const scan = scans.get(request.abs);
    if (!scan) continue;
    if (scan.ignores.length > 0) ignoreComments.push({ file: request.file, tool: request.tool, directives: scan.ignores });
    const values = reported.get(request.file);
    for (const hit of scan.hits) {
      if (values?.some((v) => v.first <= hit.line && hit.line <= v.last)) continue;
      const kind = `line ${hit.line} holds what looks like ${credentialNoun(hit.kind)} (${hit.shown}…)`;
      if (request.remote) {
        findings.push({ ...fileFinding("security/secret-literal", request.file, `${kind}; ${PUBLISHED_WITH_IT}`, publishedSecretHint(request.tool), hit, "warning"), tool: request.tool });
      } else findings.push({ ...fileFinding("security/secret-literal", request.file, `${kind}; the file is committed with the tool`, hintFor(request.file, hit.line), hit), tool: request.tool });
    }
  }
  return { findings, ignoreComments };
}

/**
 * The lines of each manifest value security.ts reported a credential in, by file: from its field's
 * line to the value's last (a block scalar's text below its key, where no comment can be; an
 * ignore comment after its `|` covers it), else the field's line alone.
 */
function reportedLines(already: readonly Finding[], tools: readonly Pick<Tool, "id" | "manifestFile" | "locate">[]): Map<string, { first: number; last: number }[]> {
  const out = new Map<string, { first: number; last: number }[]>();
  for (const f of already) {
    if (f.rule !== "security/secret-literal" || f.line === undefined) continue;
    let last = f.line;
    if (f.pointer !== undefined) {
      // A finding names its tool's manifest file as the tool does (toolFinding); rare, so a scan.
      const tool = tools.find((t) => t.id === f.tool && t.manifestFile === f.file);
      last = Math.max(last, tool?.locate(f.pointer)?.lastLine ?? last);
    }
    // By the file itself: an Agent Plugin's server names `<plugin>/mcp.json#<server>`.
    const file = fileOnDisk(f.file);
    const lines = out.get(file);
    if (lines) lines.push({ first: f.line, last });
    else out.set(file, [{ first: f.line, last }]);
  }
  return out;
}
