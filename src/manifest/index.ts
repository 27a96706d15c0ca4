// manifest/ owns reading tools from disk in every form and dialect into one Tool model, with
// source positions. It must not validate (validate/ does) or hash (integrity/ and lockfile/ do).
export { BUILTIN_ROOT, builtinTools } from "./builtins.ts";
export { type Project, type ReadProjectOptions, readProject } from "./discover-io.ts";
export { ManifestProblem, decodeManifest, parseManifestText, syntaxOf } from "./forms.ts";
export { EXECUTORLESS_TYPES, PRIMITIVES, TOOL_TYPES, type Tool, type ToolFile, type ToolType } from "./model.ts";
export { normalizeManifest, parseExecutorRef } from "./normalize.ts";
export { TOOLS_DIR, findProjectRoot, listToolFiles, toProjectPath } from "./project-io.ts";
