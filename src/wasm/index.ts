// wasm/ owns WebAssembly tools between the verified plan and the subprocess primitive: reading a
// module's imports and memory (module-info.ts), instrumenting it with fuel and a linear-memory cap
// (instrument.ts, with binaryen loaded from the file embedded in the binary: binaryen-io.ts),
// caching the instrumented module by the digest of the published one (prepare-io.ts), and the WASI
// host program kiwi starts inside the sandbox (wasi-host-io.ts), with the names exec shares with it
// (wasi-command.ts) and exec's end of its verdict on which limit ended a run (verdict-io.ts).
// It never decides what a tool may do: limits and paths come from the chain, the sandbox from exec/.
