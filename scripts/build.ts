// Compiles kiwi into one self-contained executable: dist/kiwi (bun build --compile).
// --bytecode (which needs --format=esm for top-level await) precompiles the JavaScript, cutting
// start-up from ~40 ms to ~10 ms: most of a warm `kiwi exec` is start-up. --splitting keeps lazily
// imported commands (the MCP SDK, ajv, the validator) in chunks that load only when used: merely
// carrying ~750 modules in one chunk cost every run ~4 ms. --compile-jit-policy=10 keeps run-once
// start-up code in the interpreter (JIT compiling it cost a warm exec ~3 ms of CPU); kiwi restores
// the normal policy where work runs long (src/self.ts jitAtFullSpeed). No .env or bunfig.toml is
// loaded from the working directory: a project's .env would otherwise set kiwi's own environment
// (KIWI_SANDBOX=off in a cloned repository turned the sandbox off), and bunfig.toml could preload code.
// `kiwi --help` without colour is rendered here, by the source CLI, and baked in as KIWI_ROOT_HELP
// (src/bin.ts prints it without loading the CLI; test/e2e/help.test.ts holds both equal).
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
// A clean dist/: the product is the one file dist/kiwi.
rmSync(join(root, "dist"), { recursive: true, force: true });
mkdirSync(join(root, "dist"), { recursive: true });
const help = Bun.spawnSync([process.execPath, join(root, "src/cli.ts"), "--help"], { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? root, NO_COLOR: "1" }, stdout: "pipe", stderr: "inherit" });
if (help.exitCode !== 0) process.exit(help.exitCode ?? 1);
const proc = Bun.spawnSync(
  [
    process.execPath,
    "build",
    "--compile",
    "--minify",
    "--bytecode",
    "--format=esm",
    "--splitting",
    "--compile-jit-policy=10",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    `--define=KIWI_ROOT_HELP=${JSON.stringify(help.stdout.toString())}`,
    join(root, "src/bin.ts"),
    "--outfile",
    join(root, "dist/kiwi"),
  ],
  { cwd: root, stdout: "inherit", stderr: "inherit" },
);
process.exit(proc.exitCode ?? 1);
