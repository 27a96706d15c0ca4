// exec's chain index: a warm call reads the chain's lockfile entries and stat rows from a small
// per-tool memo while tool.lock.json keeps its stat identity. It must never let a stale entry or a
// changed file through: every file is still stat-compared and every integrity compared.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, createContext } from "../../src/context.ts";
import { readChainIndex } from "../../src/exec/chain-memo-io.ts";
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

async function project(aheadMs?: number) {
  const root = makeProject(TOOL);
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
