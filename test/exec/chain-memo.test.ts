// exec's chain index: a warm call reads the chain's lockfile entries and stat rows from a small
// per-tool memo while tool.lock.json keeps its stat identity. It must never let a stale entry or a
// changed file through: every file is still stat-compared and every integrity compared.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, createContext } from "../../src/context.ts";
import { readChainIndex, replayVerifiedChain } from "../../src/exec/chain-memo-io.ts";
import { type ExecRequest, prepareExec } from "../../src/ops/prepare-exec-io.ts";
import { runPrepared } from "../../src/exec/run-io.ts";
import { lockProject } from "../../src/ops/lock-io.ts";
import { thrownBy } from "../helpers/errors.ts";
import { cleanupTemps, makeProject, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const TOOL = {
  ".ai/tools/greet/tool.yaml": "tool_id: greet\ntool_type: script\nversion: 1.0.0\nexecutor: bash_runtime\nconfig:\n  entrypoint: main.sh\n",
  ".ai/tools/greet/main.sh": "echo hello\n",
};

/** A context whose clock runs ahead, so files written now are past the racy margin (ctime cannot be backdated). */
function context(root: string, cacheDir: string, aheadMs = 10_000): Context {
  const base = createContext({ cwd: root, env: { PATH: process.env.PATH, HOME: makeTemp("kiwi-home-"), KIWI_CACHE_DIR: cacheDir } });
  return Object.assign(Object.create(Object.getPrototypeOf(base)), base, { now: () => Date.now() + aheadMs }) as Context;
}

const request: ExecRequest = { toolId: "greet", unlocked: false, sources: {}, dryRun: false, sandbox: "off" };

async function run(ctx: Context): Promise<string> {
  const out: Uint8Array[] = [];
  const code = await runPrepared(prepareExec(ctx, request), { stdout: (c) => void out.push(c), stderr: () => {} });
  expect(code).toBe(0);
  return Buffer.concat(out).toString();
}

async function project(aheadMs?: number, files: Record<string, string> = TOOL) {
  const root = makeProject(files);
  const cacheDir = join(makeTemp("kiwi-cache-"), "kiwi");
  const ctx = context(root, cacheDir, aheadMs);
  await lockProject(ctx);
  return { root, cacheDir, ctx, index: () => readChainIndex(cacheDir, root, "greet", ctx.now()) };
}

describe("the chain index", () => {
  test("a verified call indexes its chain; the next call is served from the index", async () => {
    const p = await project();
    expect(p.index().hit).toBeUndefined();
    expect(await run(p.ctx)).toBe("hello\n");
    const hit = p.index().hit!;
    expect(Object.keys(hit.lock.tools).sort()).toEqual(["bash_runtime", "greet", "subprocess"]);
    expect(await run(p.ctx)).toBe("hello\n");
  });

  test("nothing is indexed while the lockfile is within the racy margin", async () => {
    const p = await project(0);
    await run(p.ctx);
    expect(p.index().hit).toBeUndefined();
  });

  test("a chain file changed after indexing is still refused", async () => {
    const p = await project();
    await run(p.ctx);
    writeFileSync(join(p.root, ".ai/tools/greet/main.sh"), "echo pwned\n");
    const error = thrownBy(() => prepareExec(p.ctx, request));
    expect([error.code, error.details?.tool, error.details?.file]).toEqual(["E_INTEGRITY_MISMATCH", "greet", ".ai/tools/greet/main.sh"]);
  });

  test("a re-locked project misses the index (the lockfile's stat changed) and runs the new version", async () => {
    const p = await project();
    await run(p.ctx);
    writeFileSync(join(p.root, ".ai/tools/greet/main.sh"), "echo hello again\n");
    await lockProject(p.ctx);
    expect(p.index().hit).toBeUndefined();
    expect(await run(p.ctx)).toBe("hello again\n");
    expect(p.index().hit).toBeDefined();
  });

  test("a damaged index is ignored", async () => {
    const p = await project();
    await run(p.ctx);
    const dir = join(p.cacheDir, "exec", "chains");
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())) {
      const file = join(e.parentPath, e.name);
      chmodSync(file, 0o644);
      writeFileSync(file, readFileSync(file, "utf8").replace(/"tools":/, '"tools_":'));
    }
    expect(p.index().hit).toBeUndefined();
    expect(await run(p.ctx)).toBe("hello\n");
  });

  test("without a lockfile the call is refused as before", () => {
    const root = makeProject(TOOL);
    expect(thrownBy(() => prepareExec(context(root, join(makeTemp("kiwi-cache-"), "kiwi")), request)).code).toBe("E_LOCK_MISSING");
  });
});

describe("the verified chain in the index (a warm call stats its inputs and reads nothing else)", () => {
  /** A project whose second call is replayed: the chain index holds the verified chain. */
  async function replayed(files: Record<string, string> = { ...TOOL, ".ai/tools/greet/lib/util.sh": "x=1\n", ".ai/tools/greet/lib/deep/empty/.keep": "" }) {
    const p = await project(undefined, files);
    await run(p.ctx);
    expect(p.index().hit?.verified).toBeDefined();
    return p;
  }

  test("a replayed call reads no manifest and no other memo", async () => {
    const p = await replayed();
    for (const kind of ["manifests", "verdicts"]) rmSync(join(p.cacheDir, "exec", kind), { recursive: true, force: true });
    expect(await run(p.ctx)).toBe("hello\n");
    expect(existsSync(join(p.cacheDir, "exec", "manifests"))).toBe(false);
    expect(existsSync(join(p.cacheDir, "exec", "verdicts"))).toBe(false);
  });

  // Each change reaches one input the replay watches: a file's bytes or mode, the manifest, or a
  // folder's entries (at the top of the tool, below it, in an empty folder). None may run.
  test.each([
    ["changing a file's bytes (same size)", (root: string) => writeFileSync(join(root, ".ai/tools/greet/main.sh"), "echo pwned\n"), ".ai/tools/greet/main.sh"],
    ["setting a file's executable bit", (root: string) => chmodSync(join(root, ".ai/tools/greet/lib/util.sh"), 0o755), ".ai/tools/greet/lib/util.sh"],
    ["editing the manifest", (root: string) => writeFileSync(join(root, ".ai/tools/greet/tool.yaml"), `${TOOL[".ai/tools/greet/tool.yaml"]}description: changed\n`), ".ai/tools/greet/tool.yaml"],
    ["adding a file at the top", (root: string) => writeFileSync(join(root, ".ai/tools/greet/extra.sh"), "echo extra\n"), ".ai/tools/greet/extra.sh"],
    ["adding a file in a folder", (root: string) => writeFileSync(join(root, ".ai/tools/greet/lib/more.sh"), "y=2\n"), ".ai/tools/greet/lib/more.sh"],
    ["adding a file in an empty folder", (root: string) => writeFileSync(join(root, ".ai/tools/greet/lib/deep/empty/new.sh"), "z=3\n"), ".ai/tools/greet/lib/deep/empty/new.sh"],
    ["removing a file", (root: string) => rmSync(join(root, ".ai/tools/greet/lib/util.sh")), ".ai/tools/greet/lib/util.sh"],
    ["replacing a file by rename", (root: string) => (writeFileSync(join(root, "swap.sh"), "x=9\n"), renameSync(join(root, "swap.sh"), join(root, ".ai/tools/greet/lib/util.sh"))), ".ai/tools/greet/lib/util.sh"],
  ])("%s after the chain was recorded is refused", async (_what, change, file) => {
    const p = await replayed();
    change(p.root);
    const error = thrownBy(() => prepareExec(p.ctx, request));
    expect([error.code, error.details?.tool, error.details?.file]).toEqual(["E_INTEGRITY_MISMATCH", "greet", file]);
  });

  test("the record watches where each built-in link came from (another build of kiwi may ship another one)", async () => {
    const p = await replayed();
    const watched = p.index().hit!.verified!.watch.map((w) => w[0]);
    expect(watched.some((path) => path.endsWith("/manifest/builtin/bash_runtime.yaml"))).toBe(true);
    expect(watched.some((path) => path.endsWith("/manifest/builtin/subprocess.yaml"))).toBe(true);
  });

  test("only the kiwi that recorded a chain replays its built-in links: another build (same version) verifies afresh", async () => {
    const p = await replayed();
    const hit = p.index().hit!;
    const ids = ["greet", "bash_runtime", "subprocess"];
    const recorder = (id: string) => hit.verified!.watch.find(([path]) => path.endsWith(`/${id}.yaml`))![0];
    expect(replayVerifiedChain(hit, ids, recorder)?.map((l) => l.tool.id)).toEqual(ids);
    // Another binary: its built-ins come from itself, which the record never watched.
    expect(replayVerifiedChain(hit, ids, () => join(makeTemp(), "other-kiwi"))).toBeUndefined();
  });

  test("a tool folder holding a symbolic link is never replayed (its target is not watched)", async () => {
    const p = await project(undefined, { ...TOOL, ".ai/tools/greet/data/a.txt": "a\n" });
    symlinkSync("a.txt", join(p.root, ".ai/tools/greet/data/b.txt"));
    await lockProject(p.ctx);
    expect(await run(p.ctx)).toBe("hello\n");
    expect(p.index().hit).toBeDefined();
    expect(p.index().hit?.verified).toBeUndefined();
  });

  test("inputs written within the racy margin are not recorded", async () => {
    const p = await project();
    // The lockfile is old enough, but the tool's folder and files were written just now by this clock.
    const recent = context(p.root, p.cacheDir, 1000);
    await run(recent);
    expect(p.index().hit?.verified).toBeUndefined();
  });

  test("a chain that warns (an executor without child_schemas) is not replayed: the warning shows on every call", async () => {
    const files = {
      ".ai/tools/wrap/tool.yaml": "tool_id: wrap\ntool_type: runtime\nversion: 1.0.0\nexecutor: subprocess\nconfig:\n  command: bash\n  args: ['{entrypoint}']\n",
      ".ai/tools/inner/tool.yaml": "tool_id: inner\ntool_type: script\nversion: 1.0.0\nexecutor: wrap\nconfig:\n  entrypoint: main.sh\n",
      ".ai/tools/inner/main.sh": "echo inner\n",
    };
    const p = await project(undefined, files);
    const inner = { ...request, toolId: "inner" };
    for (let i = 0; i < 2; i++) {
      const prepared = prepareExec(p.ctx, inner);
      prepared.cleanup();
      expect(prepared.warnings.join("\n")).toContain("child_schemas");
    }
    expect(readChainIndex(p.cacheDir, p.root, "inner", p.ctx.now()).hit?.verified).toBeUndefined();
  });
});
