// formats/ owns the ecosystem's own formats as kiwi tools: the MCP registry's server.json, MCPB
// bundles, Agent Skills and Agent Plugins, read in and written back out. It must not touch the OCI
// path (registry/), package resolution (deps/) or the MCP client (mcp/); parsers are pure, disk is `*-io.ts`.
export { importFromFile, type ImportResult } from "./import-io.ts";
export { REGISTRY_TYPES, SERVER_JSON_SCHEMA, importServerJson, type ServerJsonImport, type ServerJsonImportOptions } from "./server-json.ts";
