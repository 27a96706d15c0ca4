// `kiwi check --staged` answered from its memo (src/ops/staged-memo-io.ts) by the compiled binary:
// the warm run prints byte for byte what the cold run printed (the elapsed time aside), in every
// format, for git's staged list and for pre-commit's file list.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RACY_MARGIN_MS } from "../../src/cache/stat-cache-io.ts";
import { runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { STAGED_TOOLS } from "../helpers/staged-tools.ts";
import { git, repoEnv } from "./git-helpers.ts";

afterAll(cleanupTemps);

const SLOW = 60_000;
const env = repoEnv({ KIWI_MCP_MODE: "off" });

/** A committed, locked repository of STAGED_TOOLS. */
async function committedRepo(): Promise<string> {
  const root = makeTemp("kiwi-staged-memo-");
  writeTree(root, STAGED_TOOLS);
  expect((await runKiwi(["lock"], { cwd: root, env })).exitCode).toBe(0);
  await git(root, env, "init", "-q", "-b", "main", ".");
  await git(root, env, "add", "-A");
  await git(root, env, "commit", "-q", "-m", "init");
  return root;
}

/** Waits (on the clock, not a guess) until every file of the project is past the racy margin. */
async function pastRacyMargin(root: string): Promise<void> {
  let newest = 0;
  for (const rel of readdirSync(root, { recursive: true }) as string[]) {
    if (rel.startsWith(".git")) continue;
    const st = statSync(join(root, rel));
    newest = Math.max(newest, st.mtimeMs, st.ctimeMs);
  }
  const wait = newest + RACY_MARGIN_MS + 50 - Date.now();
  if (wait > 0) await Bun.sleep(wait);
}

const noElapsed = (text: string) => text.replace(/\(\d+ ms\)/g, "(N ms)");

/** Every form of the check, cold (fresh cache: the memo is written) then warm (the memo answers). */
async function expectWarmEqualsCold(root: string, changed: string[]): Promise<number> {
  const cache = join(makeTemp("kiwi-staged-cache-"), "kiwi");
  const forms = [["check", "--staged"], ["check", "--staged", ...changed], ["check", "--staged", "--json"], ["check", "--staged", "--format", "sarif"], ["check", "--staged", "--strict"]];
  const codes: number[] = [];
  for (const args of forms) {
    const run = () => runKiwi(args, { cwd: root, env: { ...env, KIWI_CACHE_DIR: cache } });
    const cold = await run();
    // Without its parse cache, a run that read the tree would write it again: a warm run does not.
    rmSync(join(cache, "manifests"), { recursive: true, force: true });
    const warm = await run();
    expect(existsSync(join(cache, "manifests"))).toBe(false);
    expect([warm.exitCode, warm.stdout, noElapsed(warm.stderr)]).toEqual([cold.exitCode, cold.stdout, noElapsed(cold.stderr)]);
    codes.push(warm.exitCode);
  }
  expect(readdirSync(join(cache, "check/staged")).length).toBe(2); // one memo per project and --strict
  return codes[0]!;
}

describe("kiwi check --staged from its memo", () => {
  test("prints what the check printed: findings, an unstaged warning and the stale lockfile (exit 1)", async () => {
    const root = await committedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo staged\n");
    writeFileSync(join(root, ".ai/tools/py/main.py"), "def broken(:\n");
    await git(root, env, "add", "-A");
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo not staged\n");
    await pastRacyMargin(root);
    expect(await expectWarmEqualsCold(root, [".ai/tools/hi.sh", ".ai/tools/py/main.py"])).toBe(1);
  }, SLOW);

  test("prints what the check printed for a lockfile that is only stale (exit 3), then for a passing commit (exit 0)", async () => {
    const root = await committedRepo();
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    await git(root, env, "add", "-A");
    expect((await runKiwi(["lock"], { cwd: root, env })).exitCode).toBe(0); // relocked, not staged
    await pastRacyMargin(root);
    expect(await expectWarmEqualsCold(root, [".ai/tools/hi.sh"])).toBe(3);
    await git(root, env, "add", "tool.lock.json");
    expect(await expectWarmEqualsCold(root, [".ai/tools/hi.sh", "tool.lock.json"])).toBe(0);
  }, SLOW);

  test("keyed on what a check through the lock index read, answers past an edit to a tool the commit does not reach, with the bytes a fresh check prints", async () => {
    const root = makeTemp("kiwi-staged-memo-");
    writeTree(root, STAGED_TOOLS);
    const cache = join(makeTemp("kiwi-staged-cache-"), "kiwi");
    const run = (args: string[]) => runKiwi(args, { cwd: root, env: { ...env, KIWI_CACHE_DIR: cache } });
    // Locked past the racy margin, so the lock index vouches for every entry and the check reads only hi's chain.
    await pastRacyMargin(root);
    expect((await run(["lock"])).exitCode).toBe(0);
    await git(root, env, "init", "-q", "-b", "main", ".");
    await git(root, env, "add", "-A");
    await git(root, env, "commit", "-q", "-m", "init");
    appendFileSync(join(root, ".ai/tools/hi.sh"), "echo again\n");
    await git(root, env, "add", "-A");
    await pastRacyMargin(root);
    const forms = [["check", "--staged"], ["check", "--staged", "--json"], ["check", "--staged", "--format", "sarif"], ["check", "--staged", "--strict"]];
    for (const args of forms) expect((await run(args)).exitCode).toBe(3);
    const memos = () => readdirSync(join(cache, "check/staged")).map((name) => statSync(join(cache, "check/staged", name)).ino);
    const written = memos();
    expect(written.length).toBe(2); // one memo per project and --strict
    // py is no tool of hi's chain: its script is no input of this verdict (nor is the edit racy for it).
    appendFileSync(join(root, ".ai/tools/py/main.py"), "# not staged\n");
    const warm = [];
    for (const args of forms) warm.push(await run(args));
    expect(memos()).toEqual(written); // every one answered, none written again
    for (const [i, args] of forms.entries()) {
      rmSync(join(cache, "check/staged"), { recursive: true, force: true });
      const fresh = await run(args);
      expect([warm[i]!.exitCode, warm[i]!.stdout, noElapsed(warm[i]!.stderr)]).toEqual([fresh.exitCode, fresh.stdout, noElapsed(fresh.stderr)]);
    }
  }, SLOW);
});
