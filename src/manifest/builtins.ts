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
import type { ParsedManifest } from "./forms.ts";
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

/** The built-ins' ids, in the order readProject appends them. */
export const BUILTIN_IDS: readonly string[] = Object.keys(SOURCES);

let cache: Tool[] | undefined;

/** The built-in tools, parsed once per process. */
export function builtinTools(): Tool[] {
  cache ??= Object.keys(SOURCES).map((id) => builtinTool(id)!);
  return cache;
}

/**
 * One built-in tool, assembled as every built-in is; `parse` lets kiwi exec read it through its
 * memo instead of the YAML parser. Undefined for an unknown id.
 */
export function builtinTool(id: string, parse: (text: string) => Pick<ParsedManifest, "value" | "locate"> | "none" = parseYaml): Tool | undefined {
  const text = SOURCES[id];
  const parsed = text === undefined ? "none" : parse(text);
  if (parsed === "none") return undefined;
  return {
    ...normalizeManifest(parsed.value, id),
    form: "builtin",
    root: BUILTIN_ROOT,
    rootAbs: "",
    manifestFile: `${BUILTIN_ROOT}/${id}.yaml`,
    files: [],
    locate: parsed.locate,
  };
}
