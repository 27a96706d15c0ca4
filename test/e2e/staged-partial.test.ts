// The first check of a staged state by the compiled binary, reading only the tools its verdict
// looks at from the lock index (src/ops/staged-project-io.ts): it prints exactly what the check
// prints after full discovery (the index removed), in every format, and reads no other manifest.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RACY_MARGIN_MS } from "../../src/cache/stat-cache-io.ts";
import { runKiwi } from "../helpers/kiwi.ts";
import { cleanupTemps, makeTemp, writeTree } from "../helpers/tree.ts";
import { STAGED_TOOLS } from "../helpers/staged-tools.ts";
import { git, repoEnv } from "./git-helpers.ts";

afterAll(cleanupTemps);

const SLOW = 60_000;

/**
 * A committed repository of STAGED_TOOLS locked once every file is past the racy margin, so the
 * lock index records each entry's stat (a racy entry is recorded as unknown and always re-read).
 */
async function indexedRepo(env: Record<string, string>): Promise<string> {
  const root = makeTemp("kiwi-staged-partial-");
  writeTree(root, STAGED_TOOLS);
  await git(root, env, "init", "-q", "-b", "main", ".");
  let newest = 0;
  for (const rel of readdirSync(join(root, ".ai/tools"), { recursive: true }) as string[]) newest = Math.max(newest, statSync(join(root, ".ai/tools", rel)).ctimeMs);
  await Bun.sleep(Math.max(0, newest + RACY_MARGIN_MS + 50 - Date.now()));
  expect((await runKiwi(["lock"], { cwd: root, env })).exitCode).toBe(0);
  await git(root, env, "add", "-A");
  await git(root, env, "commit", "-q", "-m", "init");
  return root;
}

const noElapsed = (text: string) => text.replace(/\(\d+ ms\)/g, "(N ms)");

describe("kiwi check --staged reading the tree from the lock index", () => {
  test("prints what full discovery prints, in every format, without reading the other manifests", async () => {
    const cache = join(makeTemp("kiwi-staged-cache-"), "kiwi");
    const env = repoEnv({ KIWI_MCP_MODE: "off", KIWI_CACHE_DIR: cache });
    const root = await indexedRepo(env);
    // The runtime's schema now rejects its script, and the web tool changed: both are judged.
    const rt = join(root, ".ai/tools/rt.yaml");
    writeFileSync(rt, readFileSync(rt, "utf8").replace("{ type: object }", "{ type: object, required: [nothing] }"));
    appendFileSync(join(root, ".ai/tools/web.yaml"), "description: changed\n");
    await git(root, env, "add", "-A");
    const forms = [["check", "--staged"], ["check", "--staged", "--json"], ["check", "--staged", "--format", "sarif"], ["check", "--staged", ".ai/tools/rt.yaml", ".ai/tools/web.yaml"]];
    const stat = join(cache, "stat");
    for (const args of forms) {
      const run = () => runKiwi(args, { cwd: root, env });
      rmSync(join(cache, "check", "staged"), { recursive: true, force: true });
      // Full discovery writes the parse cache of every manifest; the partial read never does.
      rmSync(join(cache, "manifests"), { recursive: true, force: true });
      const partial = await run();
      expect(existsSync(join(cache, "manifests"))).toBe(false);
      const index = readdirSync(stat).find((n) => n.endsWith(".index"))!;
      const kept = readFileSync(join(stat, index));
      rmSync(join(stat, index));
      rmSync(join(cache, "check", "staged"), { recursive: true, force: true });
      const full = await run();
      expect(existsSync(join(cache, "manifests"))).toBe(true);
      writeFileSync(join(stat, index), kept);
      expect([partial.exitCode, partial.stdout, noElapsed(partial.stderr)]).toEqual([full.exitCode, full.stdout, noElapsed(full.stderr)]);
      expect(partial.exitCode).toBe(1); // the script no longer satisfies its runtime's child_schemas
    }
  }, SLOW);
});
