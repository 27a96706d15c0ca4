// The compiled binary's entry point. `kiwi --version` answers before anything else loads (citty,
// the context, the error renderer, even node:fs, whose module alone costs ~0.8 ms to evaluate):
// that keeps it at the cost of starting any compiled Bun binary, which prints with console.log too.
// Everything else goes to cli.ts's main(), the one place that sets the exit code.
import pkg from "../package.json" with { type: "json" };

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  console.log(pkg.version);
} else if (argv[0] === "__net-bridge") {
  // Inside a host-filtered sandbox: the loopback end of kiwi's proxy (exec/net-bridge-io.ts).
  const { runNetBridge } = await import("./exec/net-bridge-io.ts");
  process.exit(await runNetBridge(argv.slice(1)));
} else if (argv[0] === "__wasi") {
  // kiwi's WASI host for WebAssembly tools (wasm/wasi-host-io.ts), started inside the sandbox.
  const { runWasiHost } = await import("./wasm/wasi-host-io.ts");
  process.exit(await runWasiHost(argv.slice(1)));
} else {
  const { main } = await import("./cli.ts");
  process.exit(await main(argv));
}
