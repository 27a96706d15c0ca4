// Real interpreters: python3 parses in one process without writing bytecode, bash -n never runs
// the script, verdicts are remembered by content, and a missing interpreter is reported, not thrown.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "../../src/manifest/model.ts";
import { type SyntaxRequest, syntaxFindings } from "../../src/validate/syntax.ts";
import { SYNTAX_CACHE_FILE, parseBashError, runSyntaxChecks } from "../../src/validate/syntax-io.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const stub = { id: "t" } as Tool;
const request = (dir: string, file: string, language: "python" | "bash"): SyntaxRequest => ({ tool: stub, language, abs: join(dir, file), file });

describe("runSyntaxChecks", () => {
  test("reports Python and bash syntax errors with lines, without running or compiling anything to disk", async () => {
    const dir = makeTemp();
    const marker = join(dir, "ran");
    writeTree(dir, {
      "good.py": `open(${JSON.stringify(marker)}, "w").write("x")\n`,
      "bad.py": "x = 1\ndef f(:\n    pass\n",
      "good.sh": `touch ${marker}\n`,
      "bad.sh": "echo hi\nif then\nfi\n",
    });
    const results = await runSyntaxChecks([request(dir, "good.py", "python"), request(dir, "bad.py", "python"), request(dir, "good.sh", "bash"), request(dir, "bad.sh", "bash")]);
    expect(results.missing.size).toBe(0);
    expect(results.verdicts.get(join(dir, "good.py"))).toEqual({ ok: true });
    expect(results.verdicts.get(join(dir, "bad.py"))).toMatchObject({ ok: false, line: 2, message: expect.any(String) });
    expect(results.verdicts.get(join(dir, "good.sh"))).toEqual({ ok: true });
    expect(results.verdicts.get(join(dir, "bad.sh"))).toMatchObject({ ok: false, line: 2 });
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(dir).some((n) => n === "__pycache__")).toBe(false);
  });

  test("a bash script failing only for its CRLF line ends is told so, where bash's own message hides it", async () => {
    const dir = makeTemp();
    const script = "#!/bin/bash\nif [ -n \"$1\" ]; then\n  echo hi\nfi\n";
    writeTree(dir, { "crlf.sh": script.replaceAll("\n", "\r\n"), "bad.sh": "echo hi\nif then\nfi\n" });
    const requests = [{ ...request(dir, "crlf.sh", "bash"), tool: { id: "t", pointers: {} } as Tool }, { ...request(dir, "bad.sh", "bash"), tool: { id: "t", pointers: {} } as Tool }];
    const results = await runSyntaxChecks(requests);
    // bash says "unexpected end of file": `then\r` is no keyword to it.
    expect(results.verdicts.get(join(dir, "crlf.sh"))).toMatchObject({ ok: false, crlf: true });
    expect(results.verdicts.get(join(dir, "bad.sh"))).not.toHaveProperty("crlf");
    expect(syntaxFindings(requests, results).map((f) => f.hint)).toEqual([
      "the script has CRLF (Windows) line ends, which bash reads as part of each line: save it with LF line ends (git: a .gitattributes line `*.sh text eol=lf`)",
      "fix the script; kiwi checked it with bash -n without running it",
    ]);
  });

  test("a missing interpreter is reported per language, never thrown", async () => {
    const dir = makeTemp();
    writeTree(dir, { "a.py": "x = 1\n", "b.sh": "echo\n" });
    const results = await runSyntaxChecks([request(dir, "a.py", "python"), request(dir, "b.sh", "bash")], { env: { PATH: join(dir, "empty-bin") } });
    expect([...results.missing].sort()).toEqual(["bash", "python"]);
    expect(results.verdicts.size).toBe(0);
  });

  test("remembers verdicts by content in the cache directory, and re-checks changed files", async () => {
    const dir = makeTemp();
    const cacheDir = makeTemp("kiwi-cache-");
    writeTree(dir, { "a.py": "x = 1\n" });
    const first = await runSyntaxChecks([request(dir, "a.py", "python")], { cacheDir });
    expect(first.verdicts.get(join(dir, "a.py"))).toEqual({ ok: true });
    const cache = JSON.parse(readFileSync(join(cacheDir, SYNTAX_CACHE_FILE), "utf8"));
    expect(Object.values(cache.entries)).toEqual([{ ok: true }]);
    // A cached verdict is served as is: poison it to prove no interpreter ran the second time.
    const key = Object.keys(cache.entries)[0]!;
    writeFileSync(join(cacheDir, SYNTAX_CACHE_FILE), JSON.stringify({ version: 1, entries: { [key]: { ok: false, line: 9, message: "from cache" } } }));
    const second = await runSyntaxChecks([request(dir, "a.py", "python")], { cacheDir });
    expect(second.verdicts.get(join(dir, "a.py"))).toEqual({ ok: false, line: 9, message: "from cache" });
    writeFileSync(join(dir, "a.py"), "def f(:\n");
    const third = await runSyntaxChecks([request(dir, "a.py", "python")], { cacheDir });
    expect(third.verdicts.get(join(dir, "a.py"))).toMatchObject({ ok: false, line: 1 });
  });
});

test.each([
  ["/x/run.sh", "/x/run.sh: line 3: syntax error near unexpected token `fi'\n/x/run.sh: line 3: `fi'\n", { ok: false, line: 3, message: "syntax error near unexpected token `fi'" }],
  ["/x/run.sh", "something odd\n", { ok: false, message: "something odd" }],
  ["/x/run.sh", "", { ok: false, message: "bash -n exited with 2" }],
])("parseBashError reads %s's message", (path, stderr, verdict) => {
  expect(parseBashError(path, stderr, 2)).toEqual(verdict);
});
