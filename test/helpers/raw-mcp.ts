// The source of a minimal MCP stdio server written by hand (no SDK, so it can ship inside an npm
// package, a plugin or a bundle with no dependencies): one tool, whose result text is the value
// of `textExpression`, a JavaScript expression over `msg` (the tools/call request) and `process`.
export function rawMcpServer(options: { name: string; tool: string; description: string; inputSchema?: Record<string, unknown>; textExpression: string }): string {
  const schema = JSON.stringify(options.inputSchema ?? { type: "object", properties: {} });
  return `const readline = require("node:readline");
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === "initialize") return send({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: ${JSON.stringify(options.name)}, version: "1.0.0" } } });
  if (msg.method === "tools/list") return send({ jsonrpc: "2.0", id: msg.id, result: { tools: [{ name: ${JSON.stringify(options.tool)}, description: ${JSON.stringify(options.description)}, inputSchema: ${schema} }] } });
  if (msg.method === "tools/call") return send({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: String(${options.textExpression}) }] } });
  send({ jsonrpc: "2.0", id: msg.id, result: {} });
});
`;
}
