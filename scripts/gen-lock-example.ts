// Writes tool.lock.example.json: the real lockfile of the demo tree (what `kiwi init` scaffolds,
// the tree scripts/demo.ts runs), written by the compiled binary's `kiwi install`, so it includes
// the server's npm packages (resolved and installed from the registry) and its MCP pin.
//   bun run build && bun run scripts/gen-lock-example.ts
// test/lockfile/example.test.ts checks, without network, that its tools section is what locking
// the scaffold gives now, that its pins verify, and that it passes the lockfile schema.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContext } from "../src/context.ts";
import { writeScaffold } from "../src/init/scaffold-io.ts";
import { lockfilePath } from "../src/lockfile/fs.ts";
import { lockProject } from "../src/ops/lock-io.ts";

export const EXAMPLE_PATH = join(import.meta.dir, "..", "tool.lock.example.json");

/**
 * Locks a fresh scaffold with the library (no MCP step) and returns the lockfile text. The
 * example's own lockfile is put in first, so its npm resolution is reused: no network.
 */
export async function lockScaffold(): Promise<string> {
  const base = mkdtempSync(join(tmpdir(), "kiwi-lock-example-"));
  try {
    const root = join(base, "demo");
    writeScaffold(root);
    writeFileSync(lockfilePath(root), readFileSync(EXAMPLE_PATH, "utf8"));
    await lockProject(createContext({ cwd: root, env: { KIWI_CACHE_DIR: join(base, "cache") } }));
    return readFileSync(lockfilePath(root), "utf8");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const base = mkdtempSync(join(tmpdir(), "kiwi-lock-example-"));
  try {
    const root = join(base, "demo");
    mkdirSync(root);
    writeScaffold(root);
    const kiwi = join(import.meta.dir, "..", "dist", "kiwi");
    // HOME stays the user's so npm can use its cache; kiwi's own cache is a temp folder.
    const env = { ...process.env, KIWI_CACHE_DIR: join(base, "cache"), NO_COLOR: "1", CI: "" } as Record<string, string>;
    const proc = Bun.spawnSync([kiwi, "install"], { cwd: root, env, stdout: "inherit", stderr: "inherit" });
    if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
    writeFileSync(EXAMPLE_PATH, readFileSync(lockfilePath(root), "utf8"));
    process.stderr.write("wrote tool.lock.example.json\n");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
