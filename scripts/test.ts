// The whole test suite, as the README and .ci/run call it: typecheck, build the binary (the
// end-to-end tests run dist/kiwi), then every test file. Extra arguments go to `bun test`.
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const bun = process.execPath;

function step(title: string, argv: string[]): void {
  process.stderr.write(`\n== ${title}: ${argv.join(" ")}\n`);
  const proc = Bun.spawnSync(argv, { cwd: root, stdout: "inherit", stderr: "inherit", env: process.env });
  if (proc.exitCode !== 0) {
    process.stderr.write(`\n${title} failed (exit ${proc.exitCode ?? proc.signalCode})\n`);
    process.exit(proc.exitCode || 1);
  }
}

step("typecheck", [bun, join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", root]);
step("build", [bun, "run", join(root, "scripts/build.ts")]);
// bun 1.4 ignores bunfig's [test] timeout; end-to-end tests spawn real processes and servers.
step("test", [bun, "test", "--timeout", "30000", ...process.argv.slice(2)]);
