// MCP servers: wire listings, the two interface hashes, pins and modes, drift diffs, the poisoning
// scan, and the SDK client over kiwi's primitives. The use cases (session over exec's plan, gate,
// verify, lock pins, exec, skill) are ops/mcp-*-io.ts. It must not print (ui/ does), never writes
// the lockfile itself (lockfile/fs.ts does) and starts or reaches servers only through exec's plans.
export { PROTOCOL_REVISIONS, McpSession, openSession, withSession, type McpTarget } from "./mcp-client-io.ts";
export { diffListings, type InterfaceDiff } from "./interface-diff.ts";
export { fullComponents, hashComponents, hashInterface, interfaceComponents } from "./interface.ts";
export { checkWireListing, parseWireListing, type WireListing } from "./listing.ts";
export { MCP_MODES, decidePin, resolveMcpMode, type McpMode } from "./modes.ts";
export { listingFromPin, parsePin, pinFromListing, type McpPin } from "./pin.ts";
export { SCAN_RULES, scanListing, type ScanFinding } from "./scan.ts";
