// formats/ owns the ecosystem's own formats as kiwi tools: the MCP registry's server.json and MCPB
// bundles (imported by `kiwi add --from`, ops/import-io.ts), and the plans that export tools as
// Agent Skills, Agent Plugins or a server.json (`kiwi export`, ops/export-io.ts). Skills and plugins
// are *read* where every manifest form is read (manifest/skill.ts, manifest/plugin.ts). It must not
// touch the OCI path (registry/), package resolution (deps/) or the MCP client (mcp/). Parsers are
// pure; disk and network are `*-io.ts`.
