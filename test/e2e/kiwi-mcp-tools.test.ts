// kiwi_mcp's Python tool form through the compiled binary: read without running it, checked,
// locked, verified and run; its parameters come from CONFIG_SCHEMA; its signature line is checked.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";
import { kiwiIn } from "./lock-helpers.ts";

afterAll(cleanupTemps);

// The shape of kiwi_mcp's own .ai/tools/threads/read_transcript.py.
const BODY = `# .ai/tools/threads/read_transcript.py
__tool_type__ = "python"
__version__ = "1.0.0"
__executor_id__ = "python_runtime"
__category__ = "threads"

"""
Read Transcript Tool: Read another thread's conversation history.

A data-driven tool for reading thread transcripts from JSONL files.
"""

import json
import sys

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "thread_id": {"type": "string", "description": "Thread to read"},
        "limit": {"type": "integer", "minimum": 1, "default": 10},
    },
    "required": ["thread_id"],
}

if __name__ == "__main__":
    params = json.load(sys.stdin)
    print("reading", params["thread_id"], params["limit"])
`;

const SIGNED = `#!/usr/bin/env python3\n# kiwi-mcp:validated:2026-01-26T04:13:30Z:${createHash("sha256").update(BODY).digest("hex")}\n${BODY}`;
const FILE = ".ai/tools/threads/read_transcript.py";

describe("a kiwi_mcp Python tool", () => {
  const root = makeProject({ [FILE]: { content: SIGNED, mode: 0o755 } });
  const kiwi = kiwiIn(root);

  test("round-trips through check, lock, install, verify and exec; its id is the file stem", async () => {
    const check = await kiwi.run(["check", "--json"]);
    expect([check.exitCode, JSON.parse(check.stdout).findings]).toEqual([0, []]);
    expect((await kiwi.run(["lock"])).exitCode).toBe(0);
    expect((await kiwi.run(["install"])).exitCode).toBe(0);
    expect((await kiwi.run(["verify"])).exitCode).toBe(0);
    const r = await kiwi.run(["exec", "read_transcript", "--param", "thread_id=t-1"]);
    expect([r.exitCode, r.stdout]).toEqual([0, "reading t-1 10\n"]);
  });

  test("CONFIG_SCHEMA is its parameter contract: a bad call is refused with every violation", async () => {
    const r = await kiwi.run(["exec", "read_transcript", "--param", "limit=0"]);
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain("params/limit: must be >= 1 (got 0)");
    expect(r.stderr).toContain("params/thread_id: is required");
  });

  test("kiwi show describes it from its docstring", async () => {
    const r = await kiwi.run(["show", "read_transcript"]);
    expect(r.stdout).toContain("Read Transcript Tool: Read another thread's conversation history.");
  });

  test("an edit after signing is a warning naming the file; the lock then says the file changed", async () => {
    appendFileSync(join(root, FILE), "# edited\n");
    const check = await kiwi.run(["check", "--json"]);
    expect(check.exitCode).toBe(0);
    expect(JSON.parse(check.stdout).findings.map((f: { file: string; rule: string; line: number }) => [f.file, f.rule, f.line])).toEqual([[FILE, "kiwi_mcp/signature-stale", 2]]);
    const r = await kiwi.run(["exec", "read_transcript", "--param", "thread_id=t-1"]);
    expect([r.exitCode, r.stderr]).toEqual([6, expect.stringContaining("E_INTEGRITY_MISMATCH")]);
  });
});

test("a metadata variable that is not a literal is an error naming the file, line and variable; the file is never run", async () => {
  const root = makeProject({
    ".ai/tools/computed.py": `__tool_type__ = "python"\n__version__ = open("/tmp/kiwi-should-not-run").read()\n__executor_id__ = "python_runtime"\n`,
  });
  const r = await kiwiIn(root).run(["check", "--json"]);
  expect(r.exitCode).not.toBe(0);
  const findings = JSON.parse(r.stdout).findings as { file: string; rule: string; line: number; message: string }[];
  expect(findings.find((f) => f.rule === "kiwi_mcp/non-literal")).toMatchObject({ file: ".ai/tools/computed.py", line: 2, message: expect.stringContaining("__version__ is not a literal value") });
});

describe("CONFIG_SCHEMA written as Pydantic and JSON Schema write optional and union values", () => {
  const head = '__tool_type__ = "python"\n__version__ = "1.0.0"\n__executor_id__ = "python_runtime"\n"""Counts."""\nimport json, sys\n';
  const run = 'if __name__ == "__main__":\n    print(json.dumps(json.load(sys.stdin), sort_keys=True))\n';

  test("an optional value (anyOf [T, null], a null default, null among the enum's values) is an optional T, and runs", async () => {
    const schema = `CONFIG_SCHEMA = {"type": "object", "properties": {
    "count": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None, "description": "how many"},
    "mode": {"type": ["string", "null"], "enum": ["fast", "slow", None], "default": None},
    "level": {"enum": ["low", "high", None]},
}}\n`;
    const root = makeProject({ ".ai/tools/counts.py": head + schema + run });
    const kiwi = kiwiIn(root);
    // Each was a parameters/type, parameters/default or parameters/enum error: the tool could not be locked.
    const check = await kiwi.run(["check", "--json"]);
    expect([check.exitCode, JSON.parse(check.stdout).findings]).toEqual([0, []]);
    const ok = await kiwi.run(["exec", "counts", "--unlocked", "--param", "count=2", "--param", "mode=slow"]);
    expect([ok.exitCode, ok.stdout]).toEqual([0, '{"count": 2, "mode": "slow"}\n']);
    const bad = await kiwi.run(["exec", "counts", "--unlocked", "--param", "count=0", "--param", "level=mid"]);
    expect(bad.exitCode).toBe(7);
    expect(bad.stderr).toContain("params/count: must be >= 1 (got 0)");
  });

  test("a union kiwi cannot hold is an error saying so, per property, with a hint", async () => {
    const schema = `CONFIG_SCHEMA = {"type": "object", "properties": {
    "id": {"type": ["string", "integer"]},
    "key": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    "size": {"enum": ["small", 2]},
}}\n`;
    const r = await kiwiIn(makeProject({ ".ai/tools/unions.py": head + schema + run })).run(["check"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('parameters/type  parameter "id" has the union type ["string","integer"], and a kiwi parameter has one type (only [T, "null"] is read, as an optional T)\n    hint: choose one type (a string the tool parses, say), or declare one parameter per type');
    expect(r.stdout).toContain('parameter "key" has the union type ["integer","string"]');
    expect(r.stdout).toContain('parameter "size" has no type, and its enum mixes string and integer values, so kiwi cannot take one from it\n    hint: set type: string and write every value as a string (["small","2"]), or keep values of one type');
  });
});
