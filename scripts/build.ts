// Compiles kiwi into one self-contained executable: dist/kiwi (bun build --compile).
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
mkdirSync(join(root, "dist"), { recursive: true });
const proc = Bun.spawnSync(
  [process.execPath, "build", "--compile", "--minify", "--sourcemap", join(root, "src/cli.ts"), "--outfile", join(root, "dist/kiwi")],
  { cwd: root, stdout: "inherit", stderr: "inherit" },
);
process.exit(proc.exitCode ?? 1);
