// formats/ owns the ecosystem's own formats as kiwi tools: the MCP registry's server.json and MCPB
// bundles (imported by `kiwi add --from`, ops/import-io.ts), and the plans that export tools as
// Agent Skills, Agent Plugins or a server.json (`kiwi export`, ops/export-io.ts). Skills and plugins
// are *read* where every manifest form is read (manifest/skill.ts, manifest/plugin.ts). It must not
// touch the OCI path (registry/), package resolution (deps/) or the MCP client (mcp/). Parsers are
// pure; disk and network are `*-io.ts`.
export { EXPORT_FORMATS, type ExportFormat, exportPlugin, exportServerJson, exportSkill } from "./export-plan.ts";
export { type BundleSignature, MCPB_VERSIONS, describeSignature, importMcpbManifest, splitSignature } from "./mcpb.ts";
export { MCPB_LIMITS, checkBundleSignature, placeBundle } from "./mcpb-io.ts";
export { classifySigner, verifyDetachedSignature } from "./pkcs7.ts";
export { REGISTRY_TYPES, SERVER_JSON_SCHEMA, importServerJson, type ServerJsonImport, type ServerJsonImportOptions } from "./server-json.ts";
