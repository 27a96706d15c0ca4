// kiwi_mcp's Python tool form: module variables read as a manifest, the docstring as the
// description, CONFIG_SCHEMA as parameters, and the `# kiwi-mcp:validated:` line checked.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { toPlain } from "../../src/integrity/value.ts";
import { parseManifestText } from "../../src/manifest/forms.ts";
import type { ParseProblem } from "../../src/integrity/parse-problem.ts";

const BODY = `__tool_type__ = "python"
__version__ = "1.0.0"
__executor_id__ = "python_runtime"
__category__ = "threads"

"""
Read Transcript Tool: read another thread's
conversation history.

A data-driven tool for reading thread transcripts.
"""

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "thread_id": {"type": "string", "description": "Thread to read"},
        "limit": {"type": "integer", "minimum": 1, "default": 10, "items": {}},
    },
    "required": ["thread_id"],
}
`;

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const signed = (hash: string, shebang = false) => `${shebang ? "#!/usr/bin/env python3\n" : ""}# kiwi-mcp:validated:2026-01-26T04:13:30Z:${hash}\n${BODY}`;

function read(text: string) {
  const parsed = parseManifestText(text, "python");
  if (parsed === "none") throw new Error("no metadata");
  return { doc: toPlain(parsed.value) as Record<string, unknown>, warnings: parsed.warnings.map((w: ParseProblem) => [w.rule, w.severity, w.position?.line]), locate: parsed.locate };
}

describe("module variables as a manifest", () => {
  test("each variable fills its field; python is a script on python_runtime; the docstring's first paragraph describes it", () => {
    const { doc, warnings } = read(BODY);
    expect(warnings).toEqual([]);
    expect(doc).toEqual({
      tool_type: "script",
      version: "1.0.0",
      executor: "python_runtime",
      category: "threads",
      description: "Read Transcript Tool: read another thread's conversation history.",
      config_schema: { type: "object", properties: { thread_id: { type: "string", description: "Thread to read" }, limit: { type: "integer", minimum: 1, default: 10, items: {} } }, required: ["thread_id"] },
      parameters: [
        { name: "thread_id", type: "string", description: "Thread to read", required: true },
        { name: "limit", type: "integer", minimum: 1, default: 10 },
      ],
    });
  });

  test("findings point at the assignment's line", () => {
    const { locate } = read(BODY);
    expect(locate("/version")).toEqual({ line: 2, column: 1 });
    expect(locate("/parameters/1")).toEqual({ line: 13, column: 1 });
    // The description from the docstring points at its opening quotes, spanning its first paragraph
    // (the lines the description holds; no comment can be inside them).
    expect(locate("/description")).toEqual({ line: 6, column: 1, lastLine: 8 });
  });

  test("a string written over lines says where it ends; a dict over lines does not (a comment can sit inside)", () => {
    const { locate } = read(`__version__ = "1.0.0"\n__executor_id__ = "python_runtime"\n__description__ = '''Two\nlines'''\nCONFIG = {\n    "a": 1,  # why\n}\n`);
    expect(locate("/description")).toEqual({ line: 3, column: 1, lastLine: 4 });
    expect(locate("/description/x")).toEqual({ line: 3, column: 1 });
    expect(locate("/config")).toEqual({ line: 5, column: 1 });
  });

  test("rye's executor spellings name the tool; None is no executor (a primitive)", () => {
    expect(read('__tool_type__ = "runtime"\n__version__ = "1.0.0"\n__executor_id__ = "@subprocess"\n').doc.executor).toBe("subprocess");
    expect(read('__tool_type__ = "primitive"\n__version__ = "1.0.0"\n__executor_id__ = None\n').doc.executor).toBeNull();
  });

  test("a file with neither a YAML docstring nor kiwi_mcp variables is no tool", () => {
    expect(parseManifestText('"""Helpers."""\nVERSION = "1"\n', "python")).toBe("none");
  });

  test("a helper module with __version__ and __tool_type__ but no __executor_id__ is a library, not a tool (rye-os errors.py)", () => {
    expect(parseManifestText('"""Typed exceptions."""\n__version__ = "1.0.0"\n__tool_type__ = "python"\n__category__ = "rye/agent/threads"\n', "python")).toBe("none");
  });

  test("a YAML docstring still wins: variables are read only without one", () => {
    const parsed = parseManifestText('"""\ntool_type: script\nversion: 2.0.0\nexecutor: python_runtime\n"""\n__version__ = "1.0.0"\n', "python");
    expect(parsed !== "none" && toPlain(parsed.value)).toEqual({ tool_type: "script", version: "2.0.0", executor: "python_runtime" });
  });

  test("a value that is not a literal is an error at its line, and the field is left out", () => {
    const { doc, warnings } = read('__tool_type__ = "python"\n__version__ = get_version()\n__executor_id__ = "python_runtime"\n');
    expect(doc.version).toBeUndefined();
    expect(warnings).toEqual([["kiwi_mcp/non-literal", "error", 2]]);
  });
});

describe("the kiwi-mcp:validated line", () => {
  test.each([
    ["the full SHA-256 of the file without its signature line", signed(sha(BODY))],
    ["its first 12 hex digits", signed(sha(BODY).slice(0, 12))],
    ["after a shebang, which the hash leaves out too", signed(sha(BODY), true)],
    // Python reads text with universal newlines: kiwi_mcp hashed the LF text and saw no CR.
    ["in a file saved with CRLF line ends", signed(sha(BODY), true).replaceAll("\n", "\r\n")],
  ])("holds with %s", (_what, text) => {
    expect(read(text).warnings).toEqual([]);
  });

  test("a file changed after signing is a warning at the signature line", () => {
    expect(read(signed(sha(BODY)).replace("threads", "thread")).warnings).toEqual([["kiwi_mcp/signature-stale", "warning", 1]]);
    expect(read(signed(sha(BODY), true).replace("threads", "thread")).warnings).toEqual([["kiwi_mcp/signature-stale", "warning", 2]]);
  });

  test("on a tool whose manifest is its YAML docstring, the line is checked the same way", () => {
    const body = '"""\ntool_id: reader\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n"""\nprint("threads")\n';
    const signedDoc = (hash: string) => `#!/usr/bin/env python3\n# kiwi-mcp:validated:2026-01-26T04:13:30Z:${hash}\n${body}`;
    expect(read(signedDoc(sha(body))).warnings).toEqual([]);
    expect(read(signedDoc(sha(body)).replace("threads", "thread")).warnings).toEqual([["kiwi_mcp/signature-stale", "warning", 2]]);
    expect(read(signedDoc("abc")).warnings).toEqual([["kiwi_mcp/signature-invalid", "warning", 2]]);
  });

  test("a hash that is not 12 or 64 hex digits is a warning of its own", () => {
    expect(read(signed("not-a-hash")).warnings).toEqual([["kiwi_mcp/signature-invalid", "warning", 1]]);
    expect(read(signed("abc")).warnings).toEqual([["kiwi_mcp/signature-invalid", "warning", 1]]);
  });
});
