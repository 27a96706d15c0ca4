// ops/ holds kiwi's use cases, one file per use case: what one command does, end to end, over the
// domain folders (manifest, lockfile, exec, mcp, registry, formats, deps, cache, ...). A command
// parses its flags, makes one call here and hands the result to ui/; a use case never prints and
// never reads flags. Domain folders never import ops/ (test/purity.test.ts holds the folder
// graph), and ui/ only names the result types of ops/.
//
// Every file here does I/O, so every name ends in `-io.ts`: the purity rules read the same as in
// the domain folders, and a pure helper a use case needs belongs in its domain folder instead.
//
//   lock-tools-io.ts        kiwi lock: the --from check, the lock step, then pins for new MCP servers
//   lock-io.ts              the lock step (lock, install, init, add, update): hash, validate, write tool.lock.json
//   install-io.ts           kiwi install: remote tools, lock (or --frozen proof), fill the cache, register, MCP pins
//   dependency-install-io.ts  kiwi install's npm/pip dependency step
//   remote-install-io.ts    kiwi install's remote (registry) tools, placed by digest
//   verify-io.ts            kiwi verify: lockfile, tree and cache re-read against each other
//   kiwi-mcp-verify-io.ts   kiwi verify <kiwi_mcp lockfile>, kiwi lock --from's check
//   check-io.ts             kiwi check: discovery, the pure layers and the syntax checks
//   staged-io.ts            kiwi check --staged: the projects and tools a commit touches
//   staged-memo-io.ts       kiwi check --staged: the verdict memo keyed by every input's identity
//   staged-check-io.ts      kiwi check --staged: the fresh check of one project (memo miss)
//   exec-io.ts              kiwi exec: prepare, then run the plan (or call the mcp_tool); --dry-run plans only
//   prepare-exec-io.ts      kiwi exec's first step: from a tool id and parameters to a verified plan (nothing runs)
//   integrity-io.ts         kiwi hash json|integrity|tool
//   cache-maintain-io.ts    kiwi cache verify|prune|clean
//   key-generate-io.ts      kiwi key generate
//   tree-io.ts              kiwi tree: a tool's chain against tool.lock.json
//   inventory-io.ts         kiwi list / kiwi show
//   tool-ids-io.ts          kiwi completion --tools (discovery alone, for a fast TAB)
//   project-root-io.ts      the project around the current folder (findings named from where kiwi runs)
//   init-io.ts              kiwi init: scaffold, then lock a new tree
//   import-io.ts            kiwi add --from <server.json|.mcpb>
//   export-io.ts            kiwi export
//   registry-add-io.ts      kiwi add <oci ref>, kiwi outdated, kiwi update
//   publish-io.ts           kiwi publish
//   mcp-inspect-io.ts       an MCP session over exec's verified plan (the step every mcp use case shares)
//   mcp-gate-io.ts          kiwi mcp pin/approve and every pin decision: compare, scan, ask, write
//   mcp-verify-io.ts        kiwi mcp verify
//   mcp-interface-io.ts     kiwi mcp hash, diff, scan (read-only)
//   mcp-pin-io.ts           kiwi mcp pin, kiwi mcp approve
//   mcp-lock-io.ts          kiwi lock / install: pin every unpinned server
//   mcp-exec-io.ts          kiwi exec <mcp_tool>: the call on its server, after exec-io.ts prepared it
//   mcp-skill-get-io.ts     kiwi mcp skill
//
// No barrel on purpose: a command imports only the file of its own use case, so loading one
// command never loads another's modules (kiwi exec and --version stay small; see src/cli.ts).
