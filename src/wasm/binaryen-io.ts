// binaryen, loaded only when a module is instrumented (rarely: once per module and limits).
// Its one 15 MB file (the wasm inside as text) is embedded in the binary as a file, not bundled
// as a module: a bundled chunk of that size, even one never loaded, made every start of the
// compiled binary ~0.5 ms slower (`kiwi --version`, every `kiwi exec`), while an embedded file
// costs nothing until it is read. The path is the binary's own (/$bunfs/...) when compiled and
// the installed package's when run from source; never a bare specifier resolved at run time,
// which a project's own node_modules could answer.
import type Binaryen from "binaryen";
import embedded from "binaryen/index.js" with { type: "file" };

export type BinaryenApi = typeof Binaryen;

let loaded: Promise<BinaryenApi> | undefined;

/** binaryen's API, loaded once per process. */
export function loadBinaryen(): Promise<BinaryenApi> {
  loaded ??= import(embedded as unknown as string).then((m: { default: BinaryenApi }) => m.default);
  return loaded;
}
