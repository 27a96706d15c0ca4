// One line per top-level command, as its own `meta.description` says it. `kiwi --help` lists the
// commands from here instead of importing every command module (the MCP SDK, ajv, the registry
// client...) just to read a sentence from each: that import cost ~20 ms per call. A test holds
// each line equal to the command's own description.
export const COMMAND_SUMMARIES: Record<string, string> = {
  check: "Validate tools: manifests, types, security, executor chains, child_schemas and parameters",
  exec: "Run a tool through its verified, locked executor chain",
  tree: "Show executor chains (a tool's, or every top-level tool's): versions, integrities, sources, lock status",
  list: "List the project's tools and kiwi's built-ins: id, type, version, lock status, description",
  show: "Show a tool's parameters with their contracts and defaults, its permissions, chain and MCP pin",
  hash: "Canonical JSON, digests and tool integrity (interop and debugging)",
  lock: "Validate the tools, hash them and write tool.lock.json if anything changed",
  install: "Lock the tools (unless frozen) and put every tool file into the cache",
  verify: "Check the tool tree and the cache against tool.lock.json (or a kiwi_mcp lockfile)",
  cache: "Inspect and maintain the content-addressed cache",
  init: "Create .ai/tools/ with an example of each tool type, and tool.lock.json; never overwrites",
  hook: "Install or remove the git pre-commit hook that checks staged tools",
  completion: "Print a shell completion script for kiwi's commands, flags and tool ids",
  mcp: "MCP server interfaces: hashes, pins, drift diffs, the poisoning scan and skills",
  publish: "Push a tool (which must pass kiwi check --strict) to an OCI registry, optionally signed",
  add: "Add a tool from an OCI registry (verify every digest and the integrity, validate, lock), or import one with --from",
  remove: "Remove remote tools: their folders, lock entries, records, MCP pins and packages",
  export: "Write tools out as an Agent Skill, an Agent Plugin or an MCP registry server.json",
  outdated: "List remote tools whose tag now points to a different artifact (exit 1 if any)",
  update: "Move a remote tool to what its tag points to now, with a diff of files, manifest and permissions",
  key: "Manage ed25519 signing keys",
};
