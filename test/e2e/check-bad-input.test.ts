// The issue's list of bad input, through the compiled binary: each gives a coded finding on the
// right file, never a stack trace or a hang, and the other tools are still checked.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeProject } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const tool = (id: string, extra = "") => `tool_id: ${id}\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://x.test' }\n${extra}`;

function aliasBomb(): string {
  const lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 10; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(", ")}]`);
  return `${lines.join("\n")}\n`;
}

/** [what, relative path, content, expected rule]. */
const BAD: [string, string, string | Uint8Array, string][] = [
  ["malformed YAML", "bad_yaml.yaml", "tool_id: [unclosed\ntool_type: api\n", "parse/syntax"],
  ["malformed JSON", "bad_json.json", '{"tool_id": "x", ', "parse/syntax"],
  ["wrong types", "wrong_types.yaml", "tool_id: wrong_types\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\ndescription: [a, list]\nconfig: { url: 'https://x.test' }\n", "universal/field-type"],
  ["a duplicate YAML key", "dup_yaml.yaml", "tool_id: dup_yaml\ntool_id: again\n", "parse/duplicate-key"],
  ["a duplicate JSON key", "dup_json.json", '{"tool_id": "a", "tool_id": "b"}', "parse/duplicate-key"],
  ["non-UTF-8 bytes", "latin1.yaml", new Uint8Array([...new TextEncoder().encode("description: caf"), 0xe9, 0x0a]), "parse/encoding"],
  ["an empty file", "empty.yaml", "", "parse/empty"],
  ["a binary file", "binary.yaml", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]), "parse/binary"],
  ["a 10 MB manifest", "huge.yaml", `${tool("huge")}notes: "${"x".repeat(10 * 1024 * 1024)}"\n`, "parse/too-large"],
  ["a YAML alias bomb", "bomb.yaml", aliasBomb(), "parse/alias-bomb"],
  ["10,000 levels of JSON nesting", "deep.json", `${"[".repeat(10_000)}${"]".repeat(10_000)}`, "parse/too-deep"],
  ["10,000 levels of YAML nesting", "deep.yaml", `x: ${"[".repeat(10_000)}${"]".repeat(10_000)}\n`, "parse/too-deep"],
  ["a __proto__ key", "proto.yaml", tool("proto", "metadata:\n  __proto__: { polluted: true }\n"), "security/reserved-key"],
  ["a constructor key", "ctor.json", JSON.stringify({ tool_id: "ctor", tool_type: "api", version: "1.0.0", executor: "http_client", config: { url: "https://x.test", constructor: { prototype: 1 } } }), "security/reserved-key"],
];

function badTree(): string {
  const files: Record<string, string | Uint8Array> = {
    // A good tool with one small, known problem, to prove the rest of the tree is still checked.
    ".ai/tools/good.yaml": tool("good", "descripton: typo\n"),
  };
  for (const [, path, content] of BAD) files[`.ai/tools/${path}`] = content;
  const root = makeProject(files);
  // Symlink loop inside a directory tool.
  mkdirSync(join(root, ".ai/tools/looped"), { recursive: true });
  writeFileSync(join(root, ".ai/tools/looped/tool.yaml"), tool("looped"));
  symlinkSync("b", join(root, ".ai/tools/looped/a"));
  symlinkSync("a", join(root, ".ai/tools/looped/b"));
  // A manifest that cannot be read even by root: tool.yaml is a link to a directory (EISDIR).
  mkdirSync(join(root, ".ai/tools/dirlink"), { recursive: true });
  symlinkSync(".", join(root, ".ai/tools/dirlink/tool.yaml"));
  return root;
}

describe("kiwi check on bad input", () => {
  test("gives a coded finding on the right file for each, no stack trace, no hang, and checks the rest", async () => {
    const root = badTree();
    const r = await runKiwi(["check", "--json"], { cwd: root, timeoutMs: 20_000 });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe("");
    const doc = JSON.parse(r.stdout) as { findings: { rule: string; file: string; severity: string }[] };
    const got = new Set(doc.findings.map((f) => `${f.file} ${f.rule}`));
    for (const [, path, , rule] of BAD) expect(got).toContain(`.ai/tools/${path} ${rule}`);
    expect(got).toContain(".ai/tools/looped/a security/symlink-loop");
    expect(got).toContain(".ai/tools/dirlink/tool.yaml discover/unreadable");
    // The good tool was still checked.
    expect(got).toContain(".ai/tools/good.yaml universal/unknown-field");
    expect(r.stdout).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/);
  });

  test("human output names each file too, and the summary counts them", async () => {
    const r = await runKiwi(["check"], { cwd: badTree(), timeoutMs: 20_000 });
    expect(r.exitCode).toBe(1);
    for (const [, path, , rule] of BAD) expect(r.stdout).toMatch(new RegExp(`^\\.ai/tools/${path.replace(/\./g, "\\.")}(:\\d+(:\\d+)?)?  error  ${rule}  `, "m"));
    expect(r.stderr).toMatch(/^✖ \d+ errors, 1 warning, 0 infos in \d+ tools checked \(\d+ ms\)\n$/);
    expect(r.stderr).not.toContain("    at ");
  });

  test("an unreadable manifest is a finding (skipped as root, who can read anything)", async () => {
    if (process.getuid?.() === 0) {
      // chmod 000 does not stop root; the EISDIR case above covers a read that really fails.
      console.warn("skipped: running as root, so chmod 000 cannot make a file unreadable");
      return;
    }
    const root = makeProject({ ".ai/tools/secret.yaml": tool("secret"), ".ai/tools/ok.yaml": tool("ok") });
    chmodSync(join(root, ".ai/tools/secret.yaml"), 0o000);
    const r = await runKiwi(["check", "--json"], { cwd: root });
    chmodSync(join(root, ".ai/tools/secret.yaml"), 0o644);
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).findings).toContainEqual(expect.objectContaining({ file: ".ai/tools/secret.yaml", rule: "discover/unreadable" }));
  });

  test("a hostile child schema neither hangs nor crashes kiwi", async () => {
    const root = makeProject({
      ".ai/tools/evil_runtime.yaml":
        "tool_id: evil_runtime\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig: { command: x }\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { properties: { description: { pattern: '^(a|a)*$' } } }\n",
      ".ai/tools/victim/tool.yaml": `tool_id: victim\ntool_type: script\nversion: 1.0.0\nexecutor: evil_runtime\ndescription: ${"a".repeat(40)}!\nconfig: { entrypoint: main.py }\n`,
      ".ai/tools/victim/main.py": "print(1)\n",
    });
    const r = await runKiwi(["check", "--json"], { cwd: root, timeoutMs: 20_000 });
    expect(r.exitCode).toBe(1);
    const findings = JSON.parse(r.stdout).findings;
    expect(findings).toContainEqual(expect.objectContaining({ file: ".ai/tools/evil_runtime.yaml", rule: "child-schema/invalid", line: 9 }));
    expect(readFileSync(join(root, ".ai/tools/victim/main.py"), "utf8")).toBe("print(1)\n");
  });
});

describe("mis-indented YAML is reported on the bad line, as bad indentation", () => {
  test.each([
    ["a key indented deeper than its sibling", "config:\n  entrypoint: main.py\n   timeout: 30\n", 7, 4, "bad indentation: line 7 is indented 3 spaces, deeper than line 6 (2 spaces), whose value is already on that line", "indent line 7 by 2 spaces to make it a sibling of line 6"],
    ["a key indented less than its siblings", "config:\n    entrypoint: main.py\n  timeout: 30\n", 7, 3, "bad indentation: line 7 is indented 2 spaces, but the keys above it in the same mapping are indented 4 spaces", "indent line 7 by 4 spaces, or the keys above it by 2 spaces"],
  ])("%s", async (_what, tail, line, column, message, hint) => {
    const root = makeProject({ ".ai/tools/t.yaml": `tool_id: t\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n${tail}` });
    const r = await runKiwi(["check", "--json"], { cwd: root });
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).findings).toEqual([expect.objectContaining({ file: ".ai/tools/t.yaml", rule: "parse/syntax", line, column, message: `invalid YAML: ${message}`, hint })]);
  });

  test("inside a Python docstring the line is the script's", async () => {
    const root = makeProject({ ".ai/tools/s.py": '"""\ntool_id: s\ntool_type: script\n version: 1.0.0\nexecutor: python_runtime\n"""\nprint(1)\n' });
    const r = await runKiwi(["check", "--json"], { cwd: root });
    expect(JSON.parse(r.stdout).findings).toEqual([expect.objectContaining({ file: ".ai/tools/s.py", line: 4, hint: "remove the indentation of line 4 to make it a sibling of line 3" })]);
  });
});
