// The README's examples, run as written, so they cannot rot (issue 6).
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, hermeticEnv, runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

/** The fenced code blocks of one `## ` section, with their language. */
function blocksOf(section: string): { lang: string; body: string }[] {
  const start = readme.indexOf(`## ${section}`);
  if (start === -1) throw new Error(`README has no section "${section}"`);
  const end = readme.indexOf("\n## ", start + 3);
  const text = readme.slice(start, end === -1 ? undefined : end);
  return [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}

/** Splits a shell command line into words: quotes group, `#` starts a comment. */
function words(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let has = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      has = true;
    } else if (ch === "#" && !has && cur === "") break;
    else if (/\s/.test(ch)) {
      if (has || cur) out.push(cur);
      cur = "";
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (has || cur) out.push(cur);
  return out;
}

describe("the README", () => {
  test("five-minute tour runs as written", async () => {
    const [tour] = blocksOf("A five-minute tour");
    const lines = tour!.body.split("\n").filter((l) => l.startsWith("kiwi "));
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const dir = makeTemp("kiwi-tour-");
    // MCP pinning would start the example server through npx; the tour's point here is the rest.
    const env = hermeticEnv({ KIWI_MCP_MODE: "off" });
    for (const line of lines) {
      const args = words(line).slice(1);
      const r = await runKiwi(args, { cwd: dir, env, timeoutMs: 30_000 });
      expect({ line, exitCode: r.exitCode, stderr: r.exitCode === 0 ? "" : r.stderr }).toEqual({ line, exitCode: 0, stderr: "" });
      if (args[0] === "exec" && !args.includes("--dry-run")) expect(JSON.parse(r.stdout)).toMatchObject({ words: 6 });
      if (args.includes("--dry-run")) expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, dryRun: true, tool: "greet" });
    }
  }, 120_000);

  test("embedded-metadata examples are tools that check clean and run", async () => {
    const blocks = blocksOf("Where tools come from");
    const py = blocks.find((b) => b.lang === "python")!.body;
    const sh = blocks.find((b) => b.lang === "sh")!.body;
    const root = makeProject({ ".ai/tools/word_count.py": py, ".ai/tools/greet.sh": sh });
    const env = hermeticEnv();
    const check = await runKiwi(["check"], { cwd: root, env });
    expect([check.exitCode, check.stdout]).toEqual([0, ""]);
    const run = await runKiwi(["exec", "word_count", "--unlocked", "--params", '{"text": "a b c"}'], { cwd: root, env });
    expect([run.exitCode, run.stdout]).toEqual([0, "3\n"]);
    expect(run.stderr).toContain("warning");
    const greet = await runKiwi(["exec", "greet", "--unlocked", "--params", "{}"], { cwd: root, env });
    expect([greet.exitCode, greet.stdout]).toEqual([0, "hello\n"]);
  });

  test("the kiwi-ignore example checks as the README says, and fails without its comments", async () => {
    const yaml = blocksOf("Checking tools: `kiwi check`").find((b) => b.lang === "yaml")!.body;
    const ignoring = makeProject({ ".ai/tools/crawl.yaml": yaml });
    const check = await runKiwi(["check"], { cwd: ignoring });
    expect([check.exitCode, check.stdout]).toEqual([0, ""]);
    expect(check.stderr).toMatch(/^✔ 1 tool checked, no problems, 2 ignored by kiwi-ignore comments \(\d+ ms\)\n$/);
    const plain = makeProject({ ".ai/tools/crawl.yaml": yaml.replace(/ *# kiwi-ignore:.*\n/g, "\n") });
    const bare = await runKiwi(["check"], { cwd: plain });
    expect(bare.exitCode).toBe(1);
    expect(bare.stdout).toContain("error  security/secret-literal");
    expect(bare.stdout).toContain("warning  security/host-any");
  });

  test("the ignore file's example lets through what its three tools trip under --strict, and only with it (the dated entry until its day)", async () => {
    const ignores = blocksOf("Checking tools: `kiwi check`").find((b) => b.lang === "yaml" && b.body.startsWith("# .ai/kiwi-ignore.yaml"))!.body;
    // Built here, not written out: a scanner of this repository must not find a key in its tests.
    const key = "ghp_" + "Kw9".repeat(12);
    const tools = {
      ".ai/tools/deploy/tool.json": JSON.stringify({ tool_id: "deploy", tool_type: "script", version: "1.0.0", executor: "bash_runtime", config: { entrypoint: "release.sh" }, requires: ["shell.execute", { "net.outbound": ["deploy.example.test"] }, { "fs.write": ["./out"] }] }, null, 2),
      ".ai/tools/deploy/release.sh": "echo released\n",
      ".ai/tools/docs_example/tool.json": JSON.stringify({ tool_id: "docs_example", tool_type: "api", version: "1.0.0", executor: "http_client", config: { url: "https://api.example.test/v1", headers: { "X-Example": key } }, requires: [{ "net.outbound": ["api.example.test"] }] }, null, 2),
      ".ai/tools/crawl.yaml": "tool_id: crawl\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig: { url: 'https://${CRAWL_HOST}/{page}' }\nrequires: [{ net.outbound: ['*'] }]\nparameters:\n  - { name: page, type: string, required: true }\n",
    };
    const bare = await runKiwi(["check", "--strict"], { cwd: makeProject(tools) });
    expect(bare.exitCode).toBe(1);
    expect(bare.stdout).toContain("error  security/risky-combination");
    expect(bare.stdout).toContain("error  security/secret-literal");
    expect(bare.stdout).toContain("error  security/host-any");
    const check = await runKiwi(["check", "--strict"], { cwd: makeProject({ ...tools, ".ai/kiwi-ignore.yaml": ignores }) });
    // The example's dated entry lets crawl through until its day, and says it expired from then on.
    const expires = /expires: (\d{4}-\d\d-\d\d)/.exec(ignores)![1]!;
    if (new Date().toISOString().slice(0, 10) < expires) {
      expect([check.exitCode, check.stdout]).toEqual([0, ""]);
      expect(check.stderr).toMatch(/^✔ 3 tools checked, no problems, 3 ignored by \.ai\/kiwi-ignore\.yaml \(\d+ ms\)\n$/);
    } else {
      expect(check.exitCode).toBe(1);
      expect(check.stdout).toContain(`ignore/expired  entry 3 (security/host-any, tool crawl) expired on ${expires}`);
    }
  });
});
