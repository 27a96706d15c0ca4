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
// A warm `kiwi exec` replayed from its launch memo (src/commands/exec-remembered.ts) is bundled
// first into one module, which bin.ts imports (KIWI_REPLAY): split with the CLI, the ~45 modules it
// loads came in ~24 chunks, and loading them cost each replayed call ~0.3 ms more than one chunk.
// What the replay loads only on demand (the error and --json renderers, ajv, the HTTP and wasm
// primitives...) stays outside it, in the chunks the CLI shares, and so do errors.ts and
// integrity/value.ts, whose classes (KiwiError, Float) must be the same ones those chunks check
// with instanceof, and ui/stream.ts, whose note of a line the tool left open the error renderer
// reads (a second copy in the replay would record it where no renderer looks). The replay's other
// modules are pure or hold nothing another module reads.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = join(import.meta.dir, "..");
// A clean dist/: the product is the one file dist/kiwi.
rmSync(join(root, "dist"), { recursive: true, force: true });
mkdirSync(join(root, "dist"), { recursive: true });
const help = Bun.spawnSync([process.execPath, join(root, "src/cli.ts"), "--help"], { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? root, NO_COLOR: "1" }, stdout: "pipe", stderr: "inherit" });
if (help.exitCode !== 0) process.exit(help.exitCode ?? 1);
const replayDir = mkdtempSync(join(tmpdir(), "kiwi-replay-"));
const replay = join(replayDir, "exec-remembered.js");
try {
  await bundleReplay(replay);
} catch (error) {
  rmSync(replayDir, { recursive: true, force: true });
  throw error;
}
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
    `--define=KIWI_REPLAY=${JSON.stringify(replay)}`,
    join(root, "src/bin.ts"),
    "--outfile",
    join(root, "dist/kiwi"),
  ],
  { cwd: root, stdout: "inherit", stderr: "inherit" },
);
rmSync(replayDir, { recursive: true, force: true });
process.exit(proc.exitCode ?? 1);

/** Bundles the replay's statically imported modules into `out`, leaving the shared ones to the compile step (see the top). */
async function bundleReplay(out: string): Promise<void> {
  const shared = new Set(["errors.ts", "integrity/value.ts", "ui/stream.ts"].map((p) => join(root, "src", p)));
  const built = await Bun.build({
    entrypoints: [join(root, "src/commands/exec-remembered.ts")],
    target: "bun",
    format: "esm",
    plugins: [
      {
        name: "kiwi-replay-shared",
        setup(build) {
          build.onResolve({ filter: /^\./ }, (args) => {
            const path = resolve(args.resolveDir, args.path);
            // Absolute, so the compile step resolves each to the very module the CLI's chunks load.
            if (args.kind === "require-call" || args.kind === "dynamic-import" || shared.has(path)) return { path, external: true };
            return undefined;
          });
        },
      },
    ],
  });
  if (!built.success) throw new AggregateError(built.logs, "bundling the replay failed");
  // Bun writes an external require() as a call through an alias of import.meta.require, which the
  // compile step would not see as a require: made a plain require() again, it is bundled as written.
  const text = await built.outputs[0]!.text();
  const calls = text.split("__require(").length - 1;
  if (calls === 0) throw new Error("bundling the replay: no lazily required module found (did Bun change how it writes require?)");
  writeFileSync(out, text.replaceAll("__require(", "require("));
}
