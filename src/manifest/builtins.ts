// The tools kiwi ships as data: the two primitives and the standard runtimes. They are ordinary
// manifests (bundled into the binary as text) so they are hashed, locked and validated like any
// other tool; a project overrides one by defining a tool with the same id.
import bashRuntime from "./builtin/bash_runtime.yaml" with { type: "text" };
import bunRuntime from "./builtin/bun_runtime.yaml" with { type: "text" };
import httpClient from "./builtin/http_client.yaml" with { type: "text" };
import nodeRuntime from "./builtin/node_runtime.yaml" with { type: "text" };
import pythonRuntime from "./builtin/python_runtime.yaml" with { type: "text" };
import subprocess from "./builtin/subprocess.yaml" with { type: "text" };
import wasmRuntime from "./builtin/wasm_runtime.yaml" with { type: "text" };
import type { Tool } from "./model.ts";
import { normalizeManifest } from "./normalize.ts";
import { parseYaml } from "./yaml.ts";

/** Project-relative pseudo-root of built-in tools in findings and the lockfile. */
export const BUILTIN_ROOT = "<builtin>";

const SOURCES: Record<string, string> = {
  subprocess,
  http_client: httpClient,
  python_runtime: pythonRuntime,
  bash_runtime: bashRuntime,
  node_runtime: nodeRuntime,
  bun_runtime: bunRuntime,
  wasm_runtime: wasmRuntime,
};

let cache: Tool[] | undefined;

/** The built-in tools, parsed once per process. */
export function builtinTools(): Tool[] {
  cache ??= Object.entries(SOURCES).map(([id, text]) => {
    const parsed = parseYaml(text);
    const fields = normalizeManifest(parsed.value, id);
    return {
      ...fields,
      form: "builtin" as const,
      root: BUILTIN_ROOT,
      rootAbs: "",
      manifestFile: `${BUILTIN_ROOT}/${id}.yaml`,
      files: [],
      locate: parsed.locate,
    };
  });
  return cache;
}

/** The YAML text of a built-in tool (for `kiwi init`-style copies and documentation). */
export function builtinSource(id: string): string | undefined {
  return SOURCES[id];
}
