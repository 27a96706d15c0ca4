// A warm `kiwi exec` replayed from its launch memo: the same run as the long way, with this call's
// parameters, and never past a change to anything the memo stands on (the chain's inputs, the run
// directory, the project root, the environment, the programs on PATH).
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, createContext } from "../../src/context.ts";
import { recallLaunch } from "../../src/exec/launch-memo-io.ts";
import type { ParamSources } from "../../src/exec/params.ts";
import { runPrepared } from "../../src/exec/run-io.ts";
import type { SandboxMode } from "../../src/exec/sandbox-plan.ts";
import { execRemembered } from "../../src/ops/exec-remembered-io.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { type ExecRequest, prepareExec } from "../../src/ops/prepare-exec-io.ts";
import { sha256Hex } from "../../src/integrity/digest.ts";
import { thrownBy } from "../helpers/errors.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

// The tool prints the JSON it gets on stdin: what the call's parameters became.
const TOOL = {
  ".ai/tools/echo/tool.yaml": "tool_id: echo\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\nparameters:\n  - { name: n, type: integer, required: true }\n  - { name: tag, type: string, default: none }\n",
  ".ai/tools/echo/main.sh": 'read -r line\necho "got $line"\n',
};

/** A context whose clock runs ahead, so files written now are past the racy margin (ctime cannot be backdated). */
function context(root: string, cacheDir: string, env: Record<string, string | undefined>, aheadMs: number, cwd = root): Context {
  const base = createContext({ cwd, env: { KIWI_CACHE_DIR: cacheDir, ...env } });
  return Object.assign(Object.create(Object.getPrototypeOf(base)), base, { now: () => Date.now() + aheadMs }) as Context;
}

async function project(options: { files?: Record<string, string>; aheadMs?: number; env?: Record<string, string> } = {}) {
  const root = makeProject(options.files ?? TOOL);
  const cacheDir = join(makeTemp("kiwi-cache-"), "kiwi");
  const env = { PATH: process.env.PATH, HOME: makeTemp("kiwi-home-"), ...options.env };
  const ctx = (over: { env?: Record<string, string | undefined>; cwd?: string } = {}) => context(root, cacheDir, { ...env, ...over.env }, options.aheadMs ?? 10_000, over.cwd ?? root);
  await lockProject(ctx());
  return { root, cacheDir, ctx };
}

function collect() {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  return { sinks: { stdout: (c: Uint8Array) => void out.push(c), stderr: (c: Uint8Array) => void err.push(c) }, text: () => Buffer.concat(out).toString(), errors: () => Buffer.concat(err).toString() };
}

/** The long way: verify, plan, run (and remember the launch when it can be replayed). */
async function longWay(ctx: Context, json = '{"n":1}', sandbox: SandboxMode = "off"): Promise<string> {
  const request: ExecRequest = { toolId: "echo", unlocked: false, sources: { json }, dryRun: false, sandbox };
  const c = collect();
  expect(await runPrepared(prepareExec(ctx, request), c.sinks)).toBe(0);
  return c.text();
}

/** The replay: undefined when the memo does not hold. */
async function replay(ctx: Context, sources: ParamSources = { json: '{"n":1}' }, stdin?: string, sandbox: SandboxMode = "off") {
  const c = collect();
  const warnings: string[] = [];
  const ran = await execRemembered(ctx, { toolId: "echo", sandbox, readSources: () => ({ pairs: [], ...sources }), readStdin: () => stdin }, { warn: (w) => void warnings.push(w), sinks: () => c.sinks });
  return ran === undefined ? undefined : { code: ran.exitCode, out: c.text(), warnings };
}

describe("a remembered launch", () => {
  test("a call made before replays with this call's parameters, defaults applied", async () => {
    const p = await project();
    expect(await replay(p.ctx())).toBeUndefined();
    expect(await longWay(p.ctx())).toBe('got {"n":1,"tag":"none"}\n');
    expect(await replay(p.ctx(), { json: '{"n":2}' })).toEqual({ code: 0, out: 'got {"n":2,"tag":"none"}\n', warnings: [] });
    expect(await replay(p.ctx(), { pairs: ["n=3", "tag=x"] })).toEqual({ code: 0, out: 'got {"n":3,"tag":"x"}\n', warnings: [] });
  });

  test("parameters come from stdin only when no flag gives them, as the long way reads them", async () => {
    const p = await project();
    await longWay(p.ctx());
    expect((await replay(p.ctx(), {}, '{"n":4}'))?.out).toBe('got {"n":4,"tag":"none"}\n');
    expect((await replay(p.ctx(), { pairs: ["n=5"] }, '{"n":4}'))?.out).toBe('got {"n":5,"tag":"none"}\n');
  });

  test("a --params-file source replays as the long way reads it, below --params and --param", async () => {
    const p = await project();
    await longWay(p.ctx());
    const file = { path: "p.json", text: '{"n":6,"tag":"file"}' };
    expect((await replay(p.ctx(), { file }, '{"n":4}'))?.out).toBe('got {"n":6,"tag":"file"}\n');
    expect((await replay(p.ctx(), { file, json: '{"n":7}', pairs: ["tag=pair"] }))?.out).toBe('got {"n":7,"tag":"pair"}\n');
  });

  test("the call's sources are read only once the memo holds (the long way finds them unread)", async () => {
    const p = await project();
    let reads = 0;
    const call = { toolId: "echo", sandbox: "off" as const, readSources: () => (reads++, { json: '{"n":1}', pairs: [] }), readStdin: () => (reads++, undefined) };
    const hooks = { warn: () => {}, sinks: () => collect().sinks };
    expect(await execRemembered(p.ctx(), call, hooks)).toBeUndefined();
    expect(reads).toBe(0);
    await longWay(p.ctx());
    expect((await execRemembered(p.ctx(), call, hooks))?.exitCode).toBe(0);
    expect(reads).toBe(1);
  });

  test("bad parameters get the long way's error, word for word", async () => {
    const p = await project();
    await longWay(p.ctx());
    const request: ExecRequest = { toolId: "echo", unlocked: false, sources: { json: '{"n":"x","extra":1}' }, dryRun: false, sandbox: "off" };
    const slow = thrownBy(() => prepareExec(p.ctx(), request));
    let fast: unknown;
    await replay(p.ctx(), { json: '{"n":"x","extra":1}' }).catch((e) => (fast = e));
    expect(slow.code).toBe("E_PARAMS_INVALID");
    expect([(fast as typeof slow).code, (fast as typeof slow).message, (fast as typeof slow).hint]).toEqual([slow.code, slow.message, slow.hint]);
  });

  test("the tool's exit code is the call's", async () => {
    const p = await project({ files: { ...TOOL, ".ai/tools/echo/main.sh": "read -r line\nexit 7\n" } });
    const request: ExecRequest = { toolId: "echo", unlocked: false, sources: { json: '{"n":1}' }, dryRun: false, sandbox: "off" };
    expect(await runPrepared(prepareExec(p.ctx(), request), collect().sinks)).toBe(7);
    expect((await replay(p.ctx()))?.code).toBe(7);
  });
});

describe("a remembered launch is never replayed past a change", () => {
  test.each([
    ["a file's bytes", (root: string) => writeFileSync(join(root, ".ai/tools/echo/main.sh"), 'read -r line\necho "PWN $line"\n')],
    ["the manifest", (root: string) => writeFileSync(join(root, ".ai/tools/echo/tool.yaml"), `${TOOL[".ai/tools/echo/tool.yaml"]}description: changed\n`)],
    ["a new file in the tool's folder", (root: string) => writeFileSync(join(root, ".ai/tools/echo/extra.sh"), "echo extra\n")],
    ["a file's executable bit", (root: string) => chmodSync(join(root, ".ai/tools/echo/main.sh"), 0o755)],
  ])("%s: the long way refuses the call", async (_what, change) => {
    const p = await project();
    await longWay(p.ctx());
    change(p.root);
    expect(await replay(p.ctx())).toBeUndefined();
    expect(thrownBy(() => prepareExec(p.ctx(), { toolId: "echo", unlocked: false, sources: { json: '{"n":1}' }, dryRun: false, sandbox: "off" })).code).toBe("E_INTEGRITY_MISMATCH");
  });

  test("a lockfile written again (same bytes) is a new lockfile", async () => {
    const p = await project();
    await longWay(p.ctx());
    const lockfile = join(p.root, "tool.lock.json");
    const text = readFileSync(lockfile);
    rmSync(lockfile);
    writeFileSync(lockfile, text);
    expect(await replay(p.ctx())).toBeUndefined();
  });

  test("a touched run directory sends the call the long way, which rebuilds it", async () => {
    const p = await project();
    await longWay(p.ctx());
    const runs = join(p.cacheDir, "runs");
    const [dir] = readdirSync(runs).filter((d) => !d.startsWith("."));
    const script = join(runs, dir!, "files", "main.sh");
    chmodSync(join(runs, dir!, "files"), 0o755);
    chmodSync(script, 0o644);
    writeFileSync(script, 'read -r line\necho "PWN $line"\n');
    expect(await replay(p.ctx())).toBeUndefined();
    expect(await longWay(p.ctx())).toBe('got {"n":1,"tag":"none"}\n');
  });

  test("another environment, working folder or sandbox mode is another call", async () => {
    const p = await project();
    await longWay(p.ctx());
    mkdirSync(join(p.root, "sub"));
    expect(await replay(p.ctx({ env: { EXTRA: "1" } }))).toBeUndefined();
    expect(await replay(p.ctx({ cwd: join(p.root, "sub") }))).toBeUndefined();
    expect(await replay(p.ctx(), undefined, undefined, "auto")).toBeUndefined();
    expect(await replay(p.ctx())).toBeDefined();
  });

  test("a project that appears between the working folder and the root is another project", async () => {
    const p = await project();
    const sub = join(p.root, "sub");
    mkdirSync(sub);
    await longWay(p.ctx({ cwd: sub }));
    expect(await replay(p.ctx({ cwd: sub }))).toBeDefined();
    mkdirSync(join(sub, ".ai", "tools"), { recursive: true });
    expect(await replay(p.ctx({ cwd: sub }))).toBeUndefined();
  });

  test("a command that now finds another program on PATH is planned the long way (and remembered anew)", async () => {
    const early = makeTemp("kiwi-path-");
    const p = await project({ env: { PATH: `${early}:${process.env.PATH}` } });
    await longWay(p.ctx());
    writeFileSync(join(early, "bash"), "#!/bin/sh\necho other bash\n", { mode: 0o755 });
    expect(await replay(p.ctx())).toBeUndefined();
    expect(await longWay(p.ctx())).toBe("other bash\n");
    expect((await replay(p.ctx()))?.out).toBe("other bash\n");
  });

  test("a damaged memo reads as absent", async () => {
    const p = await project();
    await longWay(p.ctx());
    const dir = join(p.cacheDir, "exec", "launches");
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    expect(files.length).toBe(1);
    const file = files[0]!;
    const original = readFileSync(file, "utf8");
    chmodSync(file, 0o644);
    // A flipped byte (its digest no longer matches), then a well-formed memo of the wrong shape.
    writeFileSync(file, original.replace('"format":2', '"format":3'));
    expect(await replay(p.ctx())).toBeUndefined();
    const body = JSON.stringify({ format: 2, root: p.root, watch: "all" });
    writeFileSync(file, `${sha256Hex(body)}\n${body}`);
    expect(await replay(p.ctx())).toBeUndefined();
    writeFileSync(file, original);
    expect(await replay(p.ctx())).toBeDefined();
  });
});

describe("secrets", () => {
  // The tool shows a digest of what it got: its output has secret values redacted.
  const SECRET_TOOL = {
    ".ai/tools/echo/tool.yaml": "tool_id: echo\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n  env:\n    AUTH: 'Bearer ${API_TOKEN}'\n    DB_PASS: '${DB_PASS}'\n  secrets: [DB_PASS]\nparameters:\n  - { name: n, type: integer, required: true }\n",
    ".ai/tools/echo/main.sh": 'read -r line\necho "got $line $(printf %s "$AUTH|$DB_PASS" | sha256sum | cut -c1-12)"\n',
  };
  const env = { API_TOKEN: "tok-4f1c9a7e2b", DB_PASS: "pw-93be1d" };

  test("never reach the memo's file; a replay hands the tool this environment's values, as the long way does", async () => {
    const p = await project({ files: SECRET_TOOL, env });
    const slow = await longWay(p.ctx());
    const expected = sha256Hex("Bearer tok-4f1c9a7e2b|pw-93be1d").slice(0, 12);
    expect(slow).toBe(`got {"n":1} ${expected}\n`);
    const dir = join(p.cacheDir, "exec", "launches");
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    expect(files.length).toBe(1);
    const text = readFileSync(files[0]!, "utf8");
    expect([text.includes("tok-4f1c9a7e2b"), text.includes("pw-93be1d")]).toEqual([false, false]);
    expect(text).toContain("<kiwi secret ");
    expect(await replay(p.ctx())).toEqual({ code: 0, out: slow, warnings: [] });
  });

  test("the recalled plan holds this environment's values where the file holds stand-ins", async () => {
    const p = await project({ files: SECRET_TOOL, env });
    await longWay(p.ctx());
    const memo = recallLaunch(p.ctx(), "echo", "off")!;
    expect(memo.secrets.map((s) => s.name).sort()).toEqual(["API_TOKEN", "DB_PASS"]);
    expect(memo.bare.subprocess.env).toMatchObject({ AUTH: "Bearer tok-4f1c9a7e2b", DB_PASS: "pw-93be1d" });
    expect(JSON.stringify(memo.bare)).not.toContain("<kiwi secret ");
  });
});

describe("what is never remembered", () => {
  test("a chain whose config names a parameter (its plan differs from call to call)", async () => {
    const p = await project({ files: { ...TOOL, ".ai/tools/echo/tool.yaml": `${TOOL[".ai/tools/echo/tool.yaml"]}` .replace("entrypoint: main.sh\n", "entrypoint: main.sh\n  args: ['{tag}']\n") } });
    await longWay(p.ctx());
    expect(recallLaunch(p.ctx(), "echo", "off")).toBeUndefined();
  });

  test("a call whose inputs are within the racy margin", async () => {
    const p = await project({ aheadMs: 0 });
    await longWay(p.ctx());
    expect(recallLaunch(p.ctx(), "echo", "off")).toBeUndefined();
  });

  test("a dry run", async () => {
    const p = await project();
    prepareExec(p.ctx(), { toolId: "echo", unlocked: false, sources: { json: '{"n":1}' }, dryRun: true, sandbox: "off" }).cleanup();
    expect(recallLaunch(p.ctx(), "echo", "off")).toBeUndefined();
  });
});
