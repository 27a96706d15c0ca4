// MCP servers: wire listings, the two interface hashes, pins and modes, drift diffs, the poisoning
// scan, and the SDK client over kiwi's primitives. The use cases (session over exec's plan, gate,
// verify, lock pins, exec, skill) are ops/mcp-*-io.ts. It must not print (ui/ does), never writes
// the lockfile itself (lockfile/fs.ts does) and starts or reaches servers only through exec's plans.
