// Reading a tool's files for credentials: text files only, what each holds remembered by its stat
// identity (never within the racy window), and `kiwi check` reporting a key in a script, a helper
// or a manifest's comment, let through by a comment in the file's own language.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkTree } from "../../src/ops/check-io.ts";
import { createContext } from "../../src/context.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { readProject } from "../../src/manifest/discover-io.ts";
import { planFileScans } from "../../src/validate/file-secrets.ts";
import { FILE_SCAN_CACHE_FILE, runFileScans } from "../../src/validate/file-secrets-io.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";

afterAll(cleanupTemps);

// Built here, not written out: a scanner of this repository must not find a key in its tests.
const KEY = "ghp_" + "Kw9aB3xY9Qz5r".repeat(3).slice(0, 36);
const MANIFEST = "tool_id: t\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n";
/** Past the racy window, so what is read is remembered. */
const later = () => Date.now() + 10_000;

function project(files: Record<string, string | Uint8Array>): string {
  return writeTree(makeTemp(), { ".ai/tools/t/tool.yaml": MANIFEST, ".ai/tools/t/main.py": "print(1)\n", ...files });
}

const scansOf = (root: string, options: Parameters<typeof runFileScans>[1] = {}) => {
  const requests = planFileScans(readProject(root).tools);
  return { requests, scans: runFileScans(requests, options) };
};

describe("runFileScans", () => {
  test("finds credentials and ignore comments in text files; a binary file and a file gone since discovery give nothing", () => {
    const root = project({ ".ai/tools/t/lib.py": `# kiwi-ignore: security/secret-literal\nK = "${KEY}"\n`, ".ai/tools/t/blob.bin": new Uint8Array([1, 0, ...Buffer.from(KEY)]) });
    const requests = planFileScans(readProject(root).tools);
    writeFileSync(join(root, ".ai/tools/t/gone.txt"), KEY);
    const scans = runFileScans([...requests, { ...requests[0]!, file: ".ai/tools/t/none.txt", abs: join(root, ".ai/tools/t/none.txt") }]);
    expect([...scans.keys()]).toEqual([join(root, ".ai/tools/t/lib.py")]);
    expect(scans.get(join(root, ".ai/tools/t/lib.py"))).toEqual({
      hits: [{ kind: "GitHub token", shown: "ghp_", line: 2, column: 6 }],
      ignores: [{ line: 1, column: 1, target: 2, rules: ["security/secret-literal"], invalid: [] }],
    });
  });

  test("remembers what each file holds by its identity, and reads a changed file again", () => {
    const root = project({ ".ai/tools/t/lib.py": `K = "${KEY}"\n` });
    const cacheDir = makeTemp("kiwi-cache-");
    const first = scansOf(root, { cacheDir, now: later });
    expect(first.scans.size).toBe(1);
    const cachePath = join(cacheDir, FILE_SCAN_CACHE_FILE);
    const cache = JSON.parse(readFileSync(cachePath, "utf8")) as { version: number; entries: Record<string, Record<string, { hits: { kind: string; shown: string; line: number; column: number }[]; ignores: unknown[] }>> };
    // One entry for the tool: what its one file holding something holds, by the file's position.
    const [entry, ...more] = Object.values(cache.entries);
    expect(more).toEqual([]);
    expect(Object.values(entry!)).toEqual([{ hits: [{ kind: "GitHub token", shown: "ghp_", line: 1, column: 6 }], ignores: [] }]);
    // Answered from the cache, not the file: an entry changed by hand is what comes back.
    for (const scan of Object.values(entry!)) scan.hits[0]!.line = 9;
    writeFileSync(cachePath, JSON.stringify(cache));
    expect([...scansOf(root, { cacheDir, now: later }).scans.values()].map((s) => s.hits[0]!.line)).toEqual([9]);
    // A changed file has another identity: read again.
    writeFileSync(join(root, ".ai/tools/t/lib.py"), `\n\nK = "${KEY}"\n`);
    expect([...scansOf(root, { cacheDir, now: later }).scans.values()].map((s) => s.hits[0]!.line)).toEqual([3]);
  });

  test("a file changed within the racy window is not remembered; a damaged cache is an empty one", () => {
    const root = project({ ".ai/tools/t/lib.py": `K = "${KEY}"\n` });
    const cacheDir = makeTemp("kiwi-cache-");
    scansOf(root, { cacheDir });
    expect(() => readFileSync(join(cacheDir, FILE_SCAN_CACHE_FILE))).toThrow();
    writeTree(cacheDir, { [FILE_SCAN_CACHE_FILE]: '{"version":1,"entries":{"x":{"hits":"no"}}' });
    expect(scansOf(root, { cacheDir, now: later }).scans.size).toBe(1);
    // The tool's own entry, damaged: dropped, and the file read again.
    const cachePath = join(cacheDir, FILE_SCAN_CACHE_FILE);
    const cache = JSON.parse(readFileSync(cachePath, "utf8")) as { entries: Record<string, unknown> };
    for (const k of Object.keys(cache.entries)) cache.entries[k] = { "0": { hits: [{ kind: 1 }], ignores: [] } };
    writeFileSync(cachePath, JSON.stringify(cache));
    expect([...scansOf(root, { cacheDir, now: later }).scans.values()].map((scan) => scan.hits)).toEqual([[{ kind: "GitHub token", shown: "ghp_", line: 1, column: 6 }]]);
  });
});

describe("kiwi check on a tool's files", () => {
  const check = async (files: Record<string, string>) => (await checkTree({ cwd: project(files), syntax: false })).result;
  const secrets = (result: Awaited<ReturnType<typeof check>>) => result.findings.filter((f) => f.rule === "security/secret-literal").map((f) => [f.file, f.line, f.tool]);

  test("a key in a helper, in the entry point and in a manifest's comment is an error at its line", async () => {
    const result = await check({
      ".ai/tools/t/lib/auth.js": `export const token = "${KEY}";\n`,
      ".ai/tools/t/main.py": `print(1)\nTOKEN = "${KEY}"\n`,
      ".ai/tools/t/tool.yaml": `${MANIFEST}# old token: ${KEY}\n`,
    });
    expect(secrets(result)).toEqual([
      [".ai/tools/t/lib/auth.js", 1, "t"],
      [".ai/tools/t/main.py", 2, "t"],
      [".ai/tools/t/tool.yaml", 7, "t"],
    ]);
    expect(result.ok).toBe(false);
  });

  test("a key in a manifest's value is reported once, naming its field", async () => {
    const result = await check({ ".ai/tools/t/tool.yaml": `${MANIFEST}  env: { GH_TOKEN: ${KEY} }\n` });
    expect(result.findings.filter((f) => f.rule === "security/secret-literal").map((f) => f.message.slice(0, f.message.indexOf(" holds")))).toEqual(["config.env.GH_TOKEN"]);
  });

  test("a key in a value written over lines (a block scalar) is reported once, at its field, where a comment after `|` lets it through", async () => {
    const block = `description: |\n  Calls the API.\n  Token ${KEY} is used.\n`;
    const result = await check({ ".ai/tools/t/tool.yaml": `${MANIFEST}${block}# old: ${KEY}\n` });
    // The value's finding at its key; the comment below the value is no value and is reported too.
    expect(secrets(result)).toEqual([
      [".ai/tools/t/tool.yaml", 7, "t"],
      [".ai/tools/t/tool.yaml", 10, "t"],
    ]);
    const ignored = await check({ ".ai/tools/t/tool.yaml": `${MANIFEST}${block.replace("|", "| # kiwi-ignore: security/secret-literal -- GitHub's sample")}` });
    expect(ignored.findings).toEqual([]);
    expect(ignored.ignored.map((f) => [f.rule, f.line])).toEqual([["security/secret-literal", 7]]);
    // In a script's `# ---` block, the block scalar's lines are comments of the script: still the value's.
    const script = `#!/usr/bin/env bash\n# ---\n# tool_id: g\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# description: >\n#   Uses\n#   ${KEY}\n# ---\necho hi\n`;
    const shell = (await checkTree({ cwd: writeTree(makeTemp(), { ".ai/tools/g.sh": script }), syntax: false })).result;
    expect(shell.findings.filter((f) => f.rule === "security/secret-literal").map((f) => [f.line, f.pointer])).toEqual([[7, "/description"]]);
  });

  /** A remote tool's tree as kiwi add leaves it: placed in .ai/tools/.remote/r/, locked, and recorded as remote. */
  async function remoteTree(files: Record<string, string>, lockfile: "recorded" | "unrecorded" | "absent" | "unreadable"): Promise<string> {
    const root = project(files);
    if (lockfile === "absent") return root;
    const path = join(root, "tool.lock.json");
    if (lockfile === "unreadable") {
      writeFileSync(path, "{ not json\n");
      return root;
    }
    await lockProject(createContext({ cwd: root, env: { PATH: process.env.PATH, HOME: makeTemp("kiwi-home-"), KIWI_CACHE_DIR: makeTemp("kiwi-cache-") } }));
    const lock = JSON.parse(readFileSync(path, "utf8"));
    if (lockfile === "recorded") {
      const sha = (c: string) => c.repeat(64);
      lock.remote = { r: { source: `oci://127.0.0.1:5000/team/r@sha256:${sha("a")}`, reference: "127.0.0.1:5000/team/r:1", integrity: lock.tools.r.integrity, manifest_file: "tool.yaml", manifest_sha256: sha("b") } };
    }
    writeFileSync(path, JSON.stringify(lock, null, 2));
    return root;
  }
  const REMOTE = {
    ".ai/tools/.remote/r/tool.yaml": `tool_id: r\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\nconfig:\n  entrypoint: main.py\n  env: { GH_TOKEN: ${KEY} }\n`,
    ".ai/tools/.remote/r/main.py": `TOKEN = "${KEY}"\n`,
  };

  test("a key in a remote tool's file (pulled from a registry, not committed, not the consumer's to change) is a warning that names its publisher's fix", async () => {
    const result = (await checkTree({ cwd: await remoteTree(REMOTE, "recorded"), syntax: false })).result;
    const found = result.findings.filter((f) => f.rule === "security/secret-literal");
    // The manifest's value by its field (security.ts), the script's line: both the publisher's.
    expect(found.map((f) => [f.file, f.line, f.severity, f.tool])).toEqual([
      [".ai/tools/.remote/r/main.py", 1, "warning", "r"],
      [".ai/tools/.remote/r/tool.yaml", 7, "warning", "r"],
    ]);
    expect(found[1]!.message).toBe("config.env.GH_TOKEN holds what looks like a GitHub token (ghp_…); the tool was published with it (from a registry: it is not committed here)");
    expect(found[0]!.message).toBe("line 1 holds what looks like a GitHub token (ghp_…); the tool was published with it (from a registry: it is not committed here)");
    expect(found[0]!.hint).toContain('"kiwi update r"');
    expect(result.findings.map((f) => f.rule)).not.toContain("security/remote-unlocked");
    expect(result.ok).toBe(true);
  });

  test.each([
    ["unrecorded", 'tool.lock.json records no remote tool "r"'],
    ["absent", "the project has no tool.lock.json to record it"],
    ["unreadable", "tool.lock.json cannot be read to tell"],
  ] as const)("a tool in .ai/tools/.remote/ that the lockfile does not record as remote (%s) is the project's own: its keys are errors", async (lockfile, why) => {
    const result = (await checkTree({ cwd: await remoteTree(REMOTE, lockfile), syntax: false })).result;
    expect(result.ok).toBe(false);
    const unlocked = result.findings.filter((f) => f.rule === "security/remote-unlocked");
    expect(unlocked.map((f) => [f.file, f.tool, f.severity])).toEqual([[".ai/tools/.remote/r/tool.yaml", "r", "error"]]);
    expect(unlocked[0]!.message).toBe(`the tool is in .ai/tools/.remote/r, where kiwi add and kiwi install place the tools of a registry, but ${why}: it is checked as the project's own`);
    expect(unlocked[0]!.hint).toContain("git rm -r --cached .ai/tools/.remote/r");
    const found = result.findings.filter((f) => f.rule === "security/secret-literal");
    expect(found.map((f) => [f.file, f.line, f.severity])).toEqual([
      [".ai/tools/.remote/r/main.py", 1, "error"],
      [".ai/tools/.remote/r/tool.yaml", 7, "error"],
    ]);
    expect(found.every((f) => !f.message.includes("published with it"))).toBe(true);
  });

  test("a key in a kiwi_mcp module's triple-quoted description is reported once, by its field", async () => {
    const module = `__version__ = "1.0.0"\n__executor_id__ = "python_runtime"\n__description__ = """Calls GitHub\nwith ${KEY}\n"""\n`;
    const result = (await checkTree({ cwd: writeTree(makeTemp(), { ".ai/tools/m.py": module }), syntax: false })).result;
    expect(result.findings.filter((f) => f.rule === "security/secret-literal").map((f) => [f.line, f.pointer])).toEqual([[3, "/description"]]);
    // From the docstring, the description is its first paragraph: a key in a later one is the file's.
    const docstring = `__version__ = "1.0.0"\n__executor_id__ = "python_runtime"\n"""\nCalls GitHub with\n${KEY}\n\nOld: ${KEY}\n"""\n`;
    const twice = (await checkTree({ cwd: writeTree(makeTemp(), { ".ai/tools/d.py": docstring }), syntax: false })).result;
    expect(twice.findings.filter((f) => f.rule === "security/secret-literal").map((f) => [f.line, f.pointer])).toEqual([[3, "/description"], [7, undefined]]);
  });

  test("a key in a kiwi_mcp module's CONFIG dict written over lines is reported once, at its own key, where a comment lets it through", async () => {
    const module = (comment: string) => `__version__ = "1.0.0"\n__tool_type__ = "python"\n__executor_id__ = "python_runtime"\nCONFIG = {\n    "env": {\n        "LEVEL": "debug",\n        "GH_TOKEN": "${KEY}",${comment}\n    },\n}\n`;
    const once = (await checkTree({ cwd: writeTree(makeTemp(), { ".ai/tools/m.py": module("") }), syntax: false })).result;
    expect(once.findings.filter((f) => f.rule === "security/secret-literal").map((f) => [f.line, f.column, f.pointer])).toEqual([[7, 9, "/config/env/GH_TOKEN"]]);
    const ignored = (await checkTree({ cwd: writeTree(makeTemp(), { ".ai/tools/m.py": module("  # kiwi-ignore: security/secret-literal -- GitHub's documented sample") }), syntax: false })).result;
    expect([ignored.ok, ignored.findings.filter((f) => f.rule.startsWith("security/") || f.rule.startsWith("ignore/"))]).toEqual([true, []]);
    expect(ignored.ignored.map((f) => [f.line, f.pointer])).toEqual([[7, "/config/env/GH_TOKEN"]]);
  });

  test("a key in an Agent Plugin's mcp.json is reported once, by its server's field", async () => {
    const root = writeTree(makeTemp(), {
      ".ai/tools/p/plugin.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "p", version: "1.0.0", description: "d" }),
      ".ai/tools/p/mcp.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", mcpServers: { srv: { type: "stdio", command: "node", args: ["x.js"], env: { GH_TOKEN: KEY } } } }),
    });
    const result = (await checkTree({ cwd: root, syntax: false })).result;
    expect(result.findings.filter((f) => f.rule === "security/secret-literal").map((f) => [f.file, f.line, f.message.slice(0, f.message.indexOf(" holds"))])).toEqual([[".ai/tools/p/mcp.json#srv", 1, "config.env.GH_TOKEN"]]);
  });

  test("in a pretty-printed mcp.json too: the server's field is found on its own line, so the file's line is that finding", async () => {
    const root = writeTree(makeTemp(), {
      ".ai/tools/p/plugin.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "p", version: "1.0.0", description: "d" }),
      ".ai/tools/p/mcp.json": JSON.stringify({ $schema: "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", mcpServers: { srv: { type: "stdio", command: "node", args: ["x.js"], env: { GH_TOKEN: KEY } } } }, null, 2),
    });
    const result = (await checkTree({ cwd: root, syntax: false })).result;
    // Line 11, column 9: "GH_TOKEN" under the server's env; the hint names the ignore file (JSON has no comments).
    const found = result.findings.filter((f) => f.rule === "security/secret-literal");
    expect(found.map((f) => [f.file, f.line, f.column, f.pointer])).toEqual([[".ai/tools/p/mcp.json#srv", 11, 9, "/config/env/GH_TOKEN"]]);
    expect(found[0]!.hint).toEndWith("say so in .ai/kiwi-ignore.yaml (rule: security/secret-literal, tool: srv, reason: <why>)");
    // A ${NAME} in mcp.json stays text (the spec expands only ${PLUGIN_ROOT}): the hint says where a reference works.
    expect(found[0]!.hint).toStartWith('remove it, revoke it if it was ever committed or pushed, and describe the server with a kiwi manifest instead (tool_type: mcp_server, config.env NAME: "${NAME}", NAME set where kiwi runs)');
  });

  test("a key in a JSON file of a tool (no comments there) is pointed at the ignore file, by file and line", async () => {
    const result = await check({ ".ai/tools/t/fixtures/sample.json": `{\n  "token": "${KEY}"\n}\n` });
    expect(secrets(result)).toEqual([[".ai/tools/t/fixtures/sample.json", 2, "t"]]);
    const found = result.findings.find((f) => f.rule === "security/secret-literal");
    expect(found!.hint).toEndWith("say so in .ai/kiwi-ignore.yaml (rule: security/secret-literal, file: .ai/tools/t/fixtures/sample.json, line: 2, reason: <why>)");
  });

  test("a comment in the file's own language lets the line through; one that covers nothing is ignore/unused", async () => {
    const result = await check({
      ".ai/tools/t/lib/auth.js": `// kiwi-ignore: security/secret-literal -- GitHub's documented sample\nexport const token = "${KEY}";\n`,
      ".ai/tools/t/main.py": `print(1)  # kiwi-ignore: security/secret-literal\n`,
    });
    expect(secrets(result)).toEqual([]);
    expect(result.ignored.map((f) => [f.file, f.line, f.ignoredBy])).toEqual([[".ai/tools/t/lib/auth.js", 2, { line: 1, reason: "GitHub's documented sample" }]]);
    expect(result.findings.map((f) => [f.rule, f.file, f.line])).toEqual([["ignore/unused", ".ai/tools/t/main.py", 1]]);
  });

  test("a script manifest: its code's comments count beside its metadata's, and neither is read twice", async () => {
    const script = `#!/usr/bin/env python3\n"""\ntool_id: s\ntool_type: script\nversion: 1.0.0\nexecutor: python_runtime\n# kiwi-ignore: security/host-any\nrequires: [{ net.outbound: ['*'] }]\n"""\n# kiwi-ignore: security/secret-literal -- revoked\nKEY = "${KEY}"\n`;
    const result = (await checkTree({ cwd: writeTree(makeTemp(), { ".ai/tools/s.py": script }), syntax: false })).result;
    expect(result.findings).toEqual([]);
    expect(result.ignored.map((f) => [f.rule, f.line])).toEqual([["security/host-any", 8], ["security/secret-literal", 11]]);
  });

  test("in a script's metadata, a mark shown inside a block scalar is text; one in its code is a comment", async () => {
    const script = `#!/usr/bin/env bash\n# ---\n# tool_id: g\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# description: |\n#   Mark a sample: # kiwi-ignore: security/secret-literal -- why\n# ---\necho hi  # kiwi-ignore: security/secret-literal\n`;
    const result = (await checkTree({ cwd: writeTree(makeTemp(), { ".ai/tools/g.sh": script }), syntax: false })).result;
    expect(result.findings.map((f) => [f.rule, f.line])).toEqual([["ignore/unused", 10]]);
  });

  test("in a YAML manifest a mark shown inside a block scalar is text, as its parser says", async () => {
    const result = await check({ ".ai/tools/t/tool.yaml": `${MANIFEST}description: |\n  Write # kiwi-ignore: security/secret-literal -- why\n  on the line.\n` });
    expect(result.findings).toEqual([]);
  });
});
