// The compiled binary's entry point. `kiwi --version` answers before anything else loads (citty,
// the context, the error renderer, even node:fs, whose module alone costs ~0.8 ms to evaluate):
// that keeps it at the cost of starting any compiled Bun binary, which prints with console.log too.
// `kiwi --help` (and `kiwi`, `kiwi help`, `-h`) without colour is text the build rendered with the
// CLI itself (scripts/build.ts, KIWI_ROOT_HELP), printed here without loading citty and the CLI:
// ~3 ms less for what agents run to learn kiwi. Colour is for terminals only: output to a pipe or a
// file (not a character device) or NO_COLOR gets the baked text; anything else goes the long way.
// Everything else goes to cli.ts's main(), the one place that sets the exit code.
import pkg from "../package.json" with { type: "json" };

declare const KIWI_ROOT_HELP: string | undefined;
const rootHelp = typeof KIWI_ROOT_HELP === "string" ? KIWI_ROOT_HELP : undefined;
// The compiled binary's replay is commands/exec-remembered.ts bundled into one module (scripts/build.ts).
declare const KIWI_REPLAY: string | undefined;

const argv = process.argv.slice(2);
const asksRootHelp = argv.length === 0 || (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help"));
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  console.log(pkg.version);
} else if (rootHelp !== undefined && asksRootHelp && (process.env.NO_COLOR || !(await Bun.file(2).stat().catch(() => undefined))?.isCharacterDevice())) {
  console.log(rootHelp.endsWith("\n") ? rootHelp.slice(0, -1) : rootHelp);
} else if (argv[0] === "__net-bridge") {
  // Inside a host-filtered sandbox: the loopback end of kiwi's proxy (exec/net-bridge-io.ts).
  const { runNetBridge } = await import("./exec/net-bridge-io.ts");
  process.exit(await runNetBridge(argv.slice(1)));
} else if (argv[0] === "__wasi") {
  // kiwi's WASI host for WebAssembly tools (wasm/wasi-host-io.ts), started inside the sandbox.
  const { runWasiHost } = await import("./wasm/wasi-host-io.ts");
  process.exit(await runWasiHost(argv.slice(1)));
} else {
  // A warm `kiwi exec` whose launch kiwi remembers runs without loading the CLI (commands/exec-remembered.ts).
  const replay: Promise<typeof import("./commands/exec-remembered.ts")> | undefined =
    argv[0] !== "exec" ? undefined : typeof KIWI_REPLAY === "string" ? import(KIWI_REPLAY) : import("./commands/exec-remembered.ts");
  const remembered = replay ? await (await replay).runRemembered(argv.slice(1)) : undefined;
  if (remembered !== undefined) process.exit(remembered);
  const { main } = await import("./cli.ts");
  process.exit(await main(argv));
}
