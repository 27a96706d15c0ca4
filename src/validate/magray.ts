// magray's tool.json, judged as magray's own ToolManifestValidator judges it
// (crates/tools/src/manifest/validation.rs and schema.rs): required fields that are missing or
// empty, its version and name formats, the type against the entry point, strict mode's extra
// rules, and its warnings, in magray's words. kiwi's other layers leave these fields to this one
// for magray manifests, so a verdict is said once. Where kiwi cannot follow magray (a name that is
// no kiwi tool id) the finding says why. Pure.
import type { Finding } from "../findings/verdict.ts";
import { isRecord } from "../integrity/value.ts";
import type { Tool } from "../manifest/model.ts";
import { valueAt } from "../manifest/aliases.ts";
import { TOOL_ID } from "../schema/vocabulary.ts";
import { toolFinding } from "../findings/finding.ts";
import type { LayerContext } from "./layer.ts";

/** magray's required strings: absent or empty is "Missing required field". */
const REQUIRED: readonly [string, string][] = [
  ["name", "/name"],
  ["version", "/version"],
  ["description", "/description"],
  ["entry_point", "/entry_point"],
  ["metadata.author", "/metadata/author"],
  ["metadata.license", "/metadata/license"],
];

/** Script extensions magray's strict mode accepts. */
const SCRIPT_EXTENSIONS = [".py", ".js", ".sh", ".ps1", ".rb"];

/** magray's defaults when runtime_config leaves a limit out (schema.rs RuntimeConfig::default). */
const DEFAULT_MEMORY_MB = 64;
const DEFAULT_TIMEOUT_MS = 30_000;

/** Findings for a magray-dialect tool; nothing for kiwi's dialect. */
export function checkMagray(tool: Tool, ctx: LayerContext): Finding[] {
  if (tool.dialect !== "magray") return [];
  const out: Finding[] = [];
  const doc = tool.doc;
  const parentOf = (pointer: string) => pointer.slice(0, pointer.lastIndexOf("/"));
  for (const [field, pointer] of REQUIRED) {
    const value = valueAt(doc, pointer);
    if (value === undefined || value === "") {
      const at = value === undefined ? parentOf(pointer) : pointer;
      out.push(toolFinding(tool, "magray/missing-field", at, `Missing required field: ${field}`, `set "${field}" (magray requires it${field.startsWith("metadata") ? "; metadata is {author, license, ...}" : ""})`));
    }
  }

  const version = doc.version;
  if (typeof version === "string" && version !== "" && !isMagrayVersion(version)) {
    out.push(toolFinding(tool, "magray/version", "/version", `Invalid version format: ${version}`, "magray versions are exactly MAJOR.MINOR.PATCH, three numbers without leading zeros (1.2.3)"));
  }

  const name = doc.name;
  if (typeof name === "string" && name !== "") {
    if (!isMagrayName(name)) {
      out.push(toolFinding(tool, "magray/name", "/name", "Schema validation error: Tool name must contain only alphanumeric characters, hyphens, and underscores", "use letters, digits, '-' and '_', not starting or ending with '-'"));
    } else if (!TOOL_ID.test(name)) {
      out.push(
        toolFinding(
          tool,
          "magray/name-not-an-id",
          "/name",
          `magray accepts the name "${name}", but kiwi cannot use it as a tool id: kiwi names a tool by its id (kiwi exec ${name.toLowerCase().replace(/[^a-z0-9_-]/g, "-")}), in lower-case a-z, 0-9, '_' and '-', starting with a letter`,
          "rename it; ids are case-sensitive in kiwi and must work in shells and file names",
        ),
      );
    }
  }

  const entry = doc.entry_point;
  if (typeof entry === "string" && entry !== "") {
    const lower = entry.toLowerCase();
    const wrongType =
      (tool.type === "wasm" && !entry.endsWith(".wasm")) || (tool.type === "native" && entry.endsWith(".wasm")) || (tool.type === "script" && ctx.strict && !SCRIPT_EXTENSIONS.some((e) => lower.endsWith(e)));
    if (wrongType) {
      out.push(toolFinding(tool, "magray/type-entry", "/entry_point", `Invalid tool type '${tool.type}' for entry point '${entry}'`, tool.type === "wasm" ? "a wasm tool's entry point ends in .wasm" : tool.type === "native" ? 'a .wasm entry point is a "wasm" tool' : `in strict mode a script ends in ${SCRIPT_EXTENSIONS.join(", ")}`));
    }
  }

  const capabilities = Array.isArray(doc.capabilities) ? doc.capabilities : [];
  if (ctx.strict && capabilities.length === 0) {
    out.push(toolFinding(tool, "magray/capability-required", Array.isArray(doc.capabilities) ? "/capabilities" : "", "Tool must declare at least one capability in strict mode", 'declare what it needs, e.g. "capabilities": ["ui"]'));
  }

  out.push(...advice(tool, capabilities));
  return out;
}

/** magray's generate_warnings: advice that never fails a manifest. */
function advice(tool: Tool, capabilities: readonly unknown[]): Finding[] {
  const doc = tool.doc;
  const metadata = isRecord(doc.metadata) ? doc.metadata : {};
  const runtime = isRecord(doc.runtime_config) ? doc.runtime_config : {};
  const memory = typeof runtime.max_memory_mb === "number" ? runtime.max_memory_mb : DEFAULT_MEMORY_MB;
  const timeout = typeof runtime.max_execution_time_ms === "number" ? runtime.max_execution_time_ms : DEFAULT_TIMEOUT_MS;
  // magray's messages as it words them; the hints are kiwi's.
  const notes: [string, string, string][] = [];
  if (metadata.repository === undefined || metadata.repository === null) notes.push(["/metadata", "No repository URL specified in metadata", 'add "repository": "https://…" to metadata']);
  if (metadata.documentation === undefined || metadata.documentation === null) notes.push(["/metadata", "No documentation URL specified in metadata", 'add "documentation": "https://…" to metadata']);
  if (memory > 256) notes.push(["/runtime_config/max_memory_mb", "High memory limit (>256MB) - consider optimization", "lower runtime_config.max_memory_mb to what the tool needs, 256 or less"]);
  if (timeout > 60_000) notes.push(["/runtime_config/max_execution_time_ms", "Long execution timeout (>60s) - may impact user experience", "lower runtime_config.max_execution_time_ms to 60000 or less"]);
  if (capabilities.includes("shell")) notes.push(["/capabilities", "Tool requests shell access - ensure proper sandboxing", "drop shell unless the tool runs commands; kiwi runs it in its sandbox (kiwi exec --dry-run shows how)"]);
  if (capabilities.length > 3) notes.push(["/capabilities", "Tool requests many capabilities - consider principle of least privilege", "keep only the capabilities the tool uses"]);
  return notes.map(([at, message, hint]) => toolFinding(tool, "magray/advice", isRecord(doc.metadata) || !at.startsWith("/metadata") ? at : "", message, hint));
}

/** magray's is_valid_version: exactly three parts, each a u32 without a leading zero (or "0"). */
export function isMagrayVersion(version: string): boolean {
  const parts = version.split(".");
  return parts.length === 3 && parts.every((p) => p === "0" || (/^[1-9][0-9]*$/.test(p) && Number(p) <= 4_294_967_295));
}

/** magray's is_valid_name: Unicode letters and digits, '-' and '_', not starting or ending with '-'. */
export function isMagrayName(name: string): boolean {
  return /^[\p{Alphabetic}\p{Nd}\p{Nl}\p{No}_-]+$/u.test(name) && !name.startsWith("-") && !name.endsWith("-");
}
