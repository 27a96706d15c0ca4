// Verification before anything runs, against real projects locked by kiwi's own lock: resolution
// refusals, integrity mismatches at a named link, and "what runs is what was verified".
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { statCacheRelPath } from "../../src/cache/cache-layout.ts";
import { join } from "node:path";
import { type Context, createContext } from "../../src/context.ts";
import { type ExecRequest, prepareExec } from "../../src/ops/prepare-exec-io.ts";
import { runPrepared } from "../../src/exec/run-io.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const GREET = {
  ".ai/tools/greet/tool.yaml": [
    "tool_id: greet",
    "tool_type: script",
    "version: 1.0.0",
    "executor: bash_runtime",
    "config:",
    "  entrypoint: main.sh",
    '  args: ["{name}"]',
    "  env:",
    '    TOKEN: "${GREET_TOKEN}"',
    "parameters:",
    "  - name: name",
    "    type: string",
    "    required: true",
    "",
  ].join("\n"),
  ".ai/tools/greet/main.sh": 'echo "hello $1 ($(cat))"\n',
};

function context(root: string, env: Record<string, string> = {}): Context {
  return createContext({ cwd: root, env: { PATH: process.env.PATH, HOME: makeTemp("kiwi-home-"), KIWI_CACHE_DIR: join(makeTemp("kiwi-cache-"), "kiwi"), GREET_TOKEN: "tok-XYZ", ...env } });
}

function request(toolId: string, extra: Partial<ExecRequest> = {}): ExecRequest {
  return { toolId, unlocked: false, sources: { json: '{"name":"Ada"}' }, dryRun: false, sandbox: "off", ...extra };
}

async function run(ctx: Context, req: ExecRequest) {
  const prepared = prepareExec(ctx, req);
  const out: Uint8Array[] = [];
  const code = await runPrepared(prepared, { stdout: (c) => void out.push(c), stderr: () => {} });
  return { code, stdout: Buffer.concat(out).toString(), prepared };
}

async function locked(files: Record<string, string>, env: Record<string, string> = {}) {
  const root = makeProject(files);
  const ctx = context(root, env);
  await lockProject(ctx);
  return { root, ctx };
}

describe("resolution", () => {
  test("a locked tool runs through its verified chain", async () => {
    const { ctx } = await locked(GREET);
    const { code, stdout, prepared } = await run(ctx, request("greet"));
    expect(code).toBe(0);
    expect(stdout).toBe('hello Ada ({"name":"Ada"})\n');
    expect(prepared.plan.chain.map((l) => l.id)).toEqual(["greet", "bash_runtime", "subprocess"]);
    expect(prepared.plan.chain.every((l) => /^sha256:[0-9a-f]{64}$/.test(l.integrity ?? ""))).toBe(true);
  });

  test("no lockfile: refused with the hint to lock", () => {
    const root = makeProject(GREET);
    expect(() => prepareExec(context(root), request("greet"))).toThrow(expect.objectContaining({ code: "E_LOCK_MISSING", hint: 'run "kiwi lock" (or pass --unlocked while developing)' }));
  });

  test("a tool added after locking is refused as not locked", async () => {
    const { root, ctx } = await locked(GREET);
    writeFileSync(join(root, ".ai/tools/later.sh"), "#!/bin/bash\n# ---\n# tool_id: later\n# tool_type: script\n# version: 1.0.0\n# executor: bash_runtime\n# ---\necho later\n");
    expect(() => prepareExec(ctx, request("later", { sources: {} }))).toThrow(expect.objectContaining({ code: "E_LOCK_STALE", message: "later is not in tool.lock.json" }));
  });

  test("an unknown tool suggests the nearest ids", async () => {
    const { ctx } = await locked(GREET);
    expect(() => prepareExec(ctx, request("gret"))).toThrow(expect.objectContaining({ code: "E_TOOL_NOT_FOUND", message: 'no tool has the id "gret"', hint: 'did you mean "greet"?' }));
  });

  test("a cycle in a lockfile is refused as a broken chain", () => {
    const digest = `sha256:${"a".repeat(64)}`;
    const entry = (executor: string) => ({ version: "1.0.0", type: "runtime", source: ".ai/tools/x.yaml", executor, integrity: digest, manifest_digest: digest, files: [] });
    const root = makeProject({ "tool.lock.json": JSON.stringify({ lockfileVersion: 1, tools: { a: entry("b@1.0.0"), b: entry("a@1.0.0") }, mcp_servers: {} }) });
    expect(() => prepareExec(context(root), request("a"))).toThrow(expect.objectContaining({ code: "E_CHAIN", message: expect.stringContaining("loops") }));
  });

  test("unlocked: a cycle is named with its path", () => {
    const rt = (id: string, exec: string) => `tool_id: ${id}\ntool_type: runtime\nversion: 1.0.0\nexecutor: ${exec}\nconfig:\n  command: bash\n`;
    const root = makeProject({ ".ai/tools/ra.yaml": rt("ra", "rb"), ".ai/tools/rb.yaml": rt("rb", "ra") });
    expect(() => prepareExec(context(root), request("ra", { unlocked: true, sources: {} }))).toThrow(expect.objectContaining({ code: "E_CHAIN", message: expect.stringContaining("ra -> rb -> ra") }));
  });

  test("unlocked: a missing executor is named, with the nearest id", () => {
    const root = makeProject({ ...GREET, ".ai/tools/greet/tool.yaml": GREET[".ai/tools/greet/tool.yaml"].replace("bash_runtime", "bash_runtim") });
    expect(() => prepareExec(context(root), request("greet", { unlocked: true }))).toThrow(
      expect.objectContaining({ code: "E_CHAIN", message: expect.stringContaining('executor "bash_runtim" of greet does not exist'), hint: 'did you mean "bash_runtime"?' }),
    );
  });

  test("unlocked: runs the working tree without comparing, and says so", async () => {
    const { root, ctx } = await locked(GREET);
    writeFileSync(join(root, ".ai/tools/greet/main.sh"), 'echo "edited $1"\n');
    const { stdout, prepared } = await run(ctx, request("greet", { unlocked: true }));
    expect(stdout).toBe("edited Ada\n");
    expect(prepared.plan.mode).toBe("unlocked");
    expect(prepared.warnings[0]).toContain("running greet unlocked: tool.lock.json is not compared");
  });
});

describe("integrity", () => {
  test("a file changed since the lock is refused at link 1, naming the file and both hashes", async () => {
    const { root, ctx } = await locked(GREET);
    const lock = JSON.parse(readFileSync(join(root, "tool.lock.json"), "utf8"));
    writeFileSync(join(root, ".ai/tools/greet/main.sh"), "echo tampered\n");
    let error: any;
    try {
      prepareExec(ctx, request("greet"));
    } catch (e) {
      error = e;
    }
    expect(error.code).toBe("E_INTEGRITY_MISMATCH");
    expect(error.message).toStartWith("greet -> bash_runtime -> subprocess does not match tool.lock.json; nothing was run\n  link 1 (greet@1.0.0): .ai/tools/greet/main.sh changed (locked sha256:");
    expect(error.message).toContain(`locked ${lock.tools.greet.integrity}, tree sha256:`);
    expect(error.details).toEqual(expect.objectContaining({ link: 1, tool: "greet", file: ".ai/tools/greet/main.sh", locked: lock.tools.greet.integrity }));
    expect(error.details.actual).not.toBe(lock.tools.greet.integrity);
    expect(error.hint).toContain("kiwi lock");
  });

  test("a changed executor manifest is refused at link 2", async () => {
    const tool = "tool_id: hi\ntool_type: script\nversion: 1.0.0\nexecutor: my_bash\nconfig:\n  entrypoint: hi.sh\n";
    const rt = (args: string) => `tool_id: my_bash\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: bash\n  args: ${args}\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema: { type: object }\n`;
    const { root, ctx } = await locked({ ".ai/tools/hi/tool.yaml": tool, ".ai/tools/hi/hi.sh": "echo hi\n", ".ai/tools/my_bash.yaml": rt("[]") });
    writeFileSync(join(root, ".ai/tools/my_bash.yaml"), rt('["-c", "echo pwned"]'));
    expect(() => prepareExec(ctx, request("hi", { sources: {} }))).toThrow(
      expect.objectContaining({ code: "E_INTEGRITY_MISMATCH", message: expect.stringContaining("link 2 (my_bash@1.0.0): the manifest .ai/tools/my_bash.yaml changed"), details: expect.objectContaining({ link: 2, tool: "my_bash" }) }),
    );
  });

  test("a file added to a locked tool is named", async () => {
    const { root, ctx } = await locked(GREET);
    writeFileSync(join(root, ".ai/tools/greet/sitecustomize.py"), "import os\n");
    expect(() => prepareExec(ctx, request("greet"))).toThrow(expect.objectContaining({ message: expect.stringContaining(".ai/tools/greet/sitecustomize.py was added") }));
  });
});

describe("what runs is what was verified", () => {
  test("editing the working tree after verification cannot change what runs", async () => {
    const { root, ctx } = await locked(GREET);
    const prepared = prepareExec(ctx, request("greet"));
    writeFileSync(join(root, ".ai/tools/greet/main.sh"), "echo tampered\n");
    const out: Uint8Array[] = [];
    expect(await runPrepared(prepared, { stdout: (c) => void out.push(c), stderr: () => {} })).toBe(0);
    expect(Buffer.concat(out).toString()).toBe('hello Ada ({"name":"Ada"})\n');
    expect(prepared.plan.primitive === "subprocess" && prepared.plan.subprocess.cwd).not.toContain(root);
    // The next call verifies again and refuses the edited tree.
    expect(() => prepareExec(ctx, request("greet"))).toThrow(expect.objectContaining({ code: "E_INTEGRITY_MISMATCH" }));
  });

  test("the run directory is read-only, reused while intact, and rebuilt when tampered with", async () => {
    const { ctx } = await locked(GREET);
    const first = await run(ctx, request("greet"));
    const cwd = first.prepared.plan.primitive === "subprocess" ? first.prepared.plan.subprocess.cwd : "";
    const script = join(cwd, "main.sh");
    expect(statSync(script).mode & 0o222).toBe(0);
    expect(statSync(cwd).mode & 0o222).toBe(0);
    const second = await run(ctx, request("greet"));
    expect(second.prepared.plan.primitive === "subprocess" && second.prepared.plan.subprocess.cwd).toBe(cwd);
    chmodSync(cwd, 0o755);
    chmodSync(script, 0o644);
    writeFileSync(script, "echo tampered in the cache\n");
    const third = await run(ctx, request("greet"));
    expect(third.stdout).toBe('hello Ada ({"name":"Ada"})\n');
  });

  test("exec reads the stat cache but never rewrites it (other tools keep their entries)", async () => {
    const { root, ctx } = await locked({ ...GREET, ".ai/tools/other/tool.yaml": "tool_id: other\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: o.sh\n", ".ai/tools/other/o.sh": "echo o\n" });
    const file = join(ctx.cacheDir, statCacheRelPath(root));
    const before = existsSync(file) ? readFileSync(file, "hex") : undefined;
    expect(before).toBeDefined();
    await run(ctx, request("greet"));
    expect(existsSync(file) ? readFileSync(file, "hex") : undefined).toBe(before);
  });

  test("--dry-run materialises nothing and shows secrets as ***", async () => {
    const { ctx } = await locked(GREET);
    const prepared = prepareExec(ctx, request("greet", { dryRun: true }));
    expect(prepared.shown.primitive === "subprocess" && prepared.shown.subprocess.env.TOKEN).toBe("***");
    expect(prepared.plan.primitive === "subprocess" && prepared.plan.subprocess.env.TOKEN).toBe("tok-XYZ");
    expect(JSON.stringify(prepared.shown)).not.toContain("tok-XYZ");
    expect(prepared.shown.secrets).toEqual(["GREET_TOKEN"]);
    const cwd = prepared.plan.primitive === "subprocess" ? prepared.plan.subprocess.cwd : "";
    expect(existsSync(cwd)).toBe(false);
  });

  test("parameter violations stop the call before anything is materialised", async () => {
    const { ctx } = await locked(GREET);
    expect(() => prepareExec(ctx, request("greet", { sources: { json: '{"nam":"x"}' } }))).toThrow(
      expect.objectContaining({ code: "E_PARAMS_INVALID", message: expect.stringContaining('params/nam: is not a declared parameter (did you mean "name"?)') }),
    );
    expect(existsSync(join(ctx.cacheDir, "runs"))).toBe(false);
  });
});
