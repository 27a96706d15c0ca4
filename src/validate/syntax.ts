// Script syntax checks, the pure half: which entry points need which interpreter, and how the
// interpreter's verdicts become findings. syntax-io.ts runs the interpreters. Pure.
import type { Finding } from "../findings/verdict.ts";
import type { Tool } from "../manifest/model.ts";
import { toolFinding } from "../findings/finding.ts";
import { normalizeRel, toolPath } from "./layer.ts";
import { toolPathProblem } from "../integrity/tool-path.ts";
import { ruleInfo } from "../findings/rules.ts";

export type SyntaxLanguage = "python" | "bash";

/** One file to check: the tool's entry point on disk. */
export interface SyntaxRequest {
  tool: Tool;
  language: SyntaxLanguage;
  /** Absolute path of the file. */
  abs: string;
  /** Project-relative path, for findings. */
  file: string;
}

/** What the interpreter said about one file. */
export type SyntaxVerdict = { ok: true } | { ok: false; line?: number; column?: number; message: string; crlf?: boolean };

/** Verdicts by absolute path, plus the languages whose interpreter is not installed. */
export interface SyntaxResults {
  verdicts: Map<string, SyntaxVerdict>;
  missing: Set<SyntaxLanguage>;
}

const LANGUAGE_BY_EXTENSION: Record<string, SyntaxLanguage> = { ".py": "python", ".sh": "bash", ".bash": "bash" };

/** The syntax checks the given tools need: script tools whose entry point is a .py or .sh file. */
export function planSyntaxChecks(tools: readonly Tool[]): SyntaxRequest[] {
  const out: SyntaxRequest[] = [];
  for (const tool of tools) {
    if (tool.type !== "script" || !tool.entrypoint || toolPathProblem(tool.entrypoint, "written")) continue;
    const rel = normalizeRel(tool.entrypoint);
    const dot = rel.lastIndexOf(".");
    const language = dot === -1 ? undefined : LANGUAGE_BY_EXTENSION[rel.slice(dot).toLowerCase()];
    const file = tool.files.find((f) => f.path === rel);
    if (!language || !file) continue;
    out.push({ tool, language, abs: file.abs, file: toolPath(tool, rel) });
  }
  return out;
}

const INTERPRETER: Record<SyntaxLanguage, string> = { python: "python3", bash: "bash" };

/** Findings from the interpreters' verdicts; a missing interpreter is one warning per language. */
export function syntaxFindings(requests: readonly SyntaxRequest[], results: SyntaxResults): Finding[] {
  const out: Finding[] = [];
  for (const language of results.missing) {
    const affected = requests.filter((r) => r.language === language);
    const first = affected[0];
    if (!first) continue;
    const others = affected.length > 1 ? ` (and ${affected.length - 1} more)` : "";
    out.push(toolFinding(first.tool, "script/interpreter-missing", first.tool.pointers.entrypoint ?? "", `${INTERPRETER[language]} is not installed, so ${first.file}${others} was not syntax-checked`, `install ${INTERPRETER[language]} to check ${language} scripts`));
  }
  for (const request of requests) {
    const verdict = results.verdicts.get(request.abs);
    if (!verdict || verdict.ok) continue;
    const finding: Finding = {
      rule: "script/syntax",
      severity: ruleInfo("script/syntax").severity,
      file: request.file,
      tool: request.tool.id,
      message: `${request.language === "python" ? "Python" : "bash"} syntax error: ${verdict.message}`,
      hint: verdict.crlf
        ? "the script has CRLF (Windows) line ends, which bash reads as part of each line: save it with LF line ends (git: a .gitattributes line `*.sh text eol=lf`)"
        : `fix the script; kiwi checked it with ${request.language === "python" ? "python3's ast.parse" : "bash -n"} without running it`,
    };
    if (verdict.line !== undefined) finding.line = verdict.line;
    if (verdict.column !== undefined) finding.column = verdict.column;
    out.push(finding);
  }
  return out;
}
