// The whole test suite, as the README and .ci/run call it: typecheck, build the binary (the
// end-to-end tests run dist/kiwi), then every test file. Extra arguments go to `bun test`.
// It ends with a plain "tests: N passed, N failed, N skipped (reasons)" line that CI systems can
// read: a skip is never silent (test/helpers/needs.ts records why each one happened).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
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

/** Runs bun test, echoing its output live, and returns the exit code and the summary counts. */
async function runTests(argv: string[], env: Record<string, string | undefined>): Promise<{ code: number; passed?: number; failed?: number; skipped?: number }> {
  process.stderr.write(`\n== test: ${argv.join(" ")}\n`);
  const proc = Bun.spawn(argv, { cwd: root, stdout: "pipe", stderr: "pipe", env });
  let tail = "";
  const echo = async (stream: ReadableStream<Uint8Array>, target: typeof Bun.stdout) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      await Bun.write(target, chunk);
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4096);
    }
  };
  await Promise.all([echo(proc.stdout, Bun.stdout), echo(proc.stderr, Bun.stderr)]);
  const code = await proc.exited;
  const count = (word: string) => {
    const match = new RegExp(`^\\s*(\\d+) ${word}$`, "m").exec(tail);
    return match ? Number(match[1]) : undefined;
  };
  return { code, passed: count("pass"), failed: count("fail"), skipped: count("skip") };
}

step("typecheck", [bun, join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", root]);
step("build", [bun, "run", join(root, "scripts/build.ts")]);
// bun 1.4 ignores bunfig's [test] timeout; end-to-end tests spawn real processes and servers.
const skipsDir = mkdtempSync(join(tmpdir(), "kiwi-test-skips-"));
const skipsFile = join(skipsDir, "reasons");
const result = await runTests([bun, "test", "--timeout", "30000", ...process.argv.slice(2)], { ...process.env, KIWI_TEST_SKIPS: skipsFile });
const reasons = [...new Set(existsSync(skipsFile) ? readFileSync(skipsFile, "utf8").split("\n").filter(Boolean) : [])];
rmSync(skipsDir, { recursive: true, force: true });
if (result.passed !== undefined) {
  const skipped = result.skipped ?? 0;
  const why = skipped > 0 && reasons.length > 0 ? ` (${reasons.join("; ")})` : "";
  process.stdout.write(`\ntests: ${result.passed} passed, ${result.failed ?? 0} failed, ${skipped} skipped${why}\n`);
}
process.exit(result.code);
