// THE table of usage examples, keyed by command path ("" is kiwi itself, "hook install" a
// subcommand). src/cli.ts appends them to `--help`; a test checks every command has examples and
// that every example names real commands and flags, so they cannot rot.
import pc from "picocolors";

/** One example: what it does, then the command line exactly as a user types it. */
export type Example = readonly [description: string, command: string];

export const EXAMPLES: Readonly<Record<string, readonly Example[]>> = {
  "": [
    ["Start a project with one example tool of each type, and its lockfile", "kiwi init"],
    ["Validate every tool under .ai/tools/", "kiwi check"],
    ["Run a tool with parameters", "kiwi exec word_count --param text='to be or not to be'"],
  ],
  check: [
    ["Validate every tool under .ai/tools/", "kiwi check"],
    ["Report on two tools only (chain rules still see the whole tree)", "kiwi check weather .ai/tools/scripts/data_processor"],
    ["Treat security warnings as errors, as CI should", "kiwi check --strict"],
    ["Write SARIF for code scanning", "kiwi check --format sarif > kiwi.sarif"],
    ["Check what the next commit changes, and that tool.lock.json is up to date for it (the pre-commit hook)", "kiwi check --staged"],
    ["Adopt kiwi on an existing project: let through what is found today in .ai/kiwi-ignore.yaml, then review each reason", "kiwi check --add-ignores"],
  ],
  exec: [
    ["Run a tool; each --param is coerced to its declared type", "kiwi exec greet --param name=Ada --param times=2"],
    ["Pass parameters as JSON, or pipe them on stdin", "echo '{\"text\": \"to be or not to be\"}' | kiwi exec word_count --params -"],
    ["Verify the chain and print the resolved plan without running anything", "kiwi exec weather_forecast --param latitude=52.52 --param longitude=13.41 --dry-run"],
    ["Call an MCP server's tool (its interface is pinned on first use)", "kiwi exec everything_echo --param message=hello"],
    ["Try an edited tool before locking it", "kiwi exec greet --param name=Ada --unlocked"],
  ],
  list: [
    ["List the project's tools, then kiwi's built-ins", "kiwi list"],
    ["The same as one JSON document (id, type, version, locked, description, source)", "kiwi list --json"],
  ],
  show: [
    ["What a tool takes: parameters with types, contracts and defaults, then its permissions and chain", "kiwi show word_count"],
    ["The same as one JSON document", "kiwi show everything_echo --json"],
  ],
  tree: [
    ["Every top-level tool's chain (the tools no other tool runs on)", "kiwi tree"],
    ["Show a tool's chain down to its primitive, with versions and integrities", "kiwi tree word_count"],
    ["The same as one JSON document", "kiwi tree everything_echo --json"],
  ],
  hash: [
    ["Canonical JSON of a document and its digest", "kiwi hash json manifest.json"],
    ["A tool's integrity and file entries", "kiwi hash tool greet"],
  ],
  "hash json": [
    ["Canonical text and sha256 digest of a file", "kiwi hash json manifest.json"],
    ["Of a document on stdin", "echo '{\"b\": 1, \"a\": 1.0}' | kiwi hash json -"],
  ],
  "hash integrity": [
    ["Integrity of a {tool_id, version, manifest, files} document (the test-vector shape)", "kiwi hash integrity vector.json"],
  ],
  "hash tool": [
    ["A tool's integrity and file entries, by id", "kiwi hash tool word_count"],
    ["By the path of its manifest, as JSON", "kiwi hash tool .ai/tools/greet.sh --json"],
  ],
  lock: [
    ["Validate, hash every tool and write tool.lock.json if anything changed", "kiwi lock"],
    ["Refuse to lock while security warnings remain", "kiwi lock --strict"],
  ],
  install: [
    ["Lock, then put every tool's files into the cache", "kiwi install"],
    ["In CI: never write the lockfile; fail if the tree differs from it (the default when CI is set: CI=true, CI=1, …)", "kiwi install --frozen-lockfile"],
  ],
  verify: [
    ["Check the tree and the cache against tool.lock.json", "kiwi verify"],
    ["The same as one JSON document, for CI", "kiwi verify --json"],
  ],
  cache: [
    ["Where the cache lives", "kiwi cache dir"],
    ["Re-hash every cached blob", "kiwi cache verify"],
  ],
  "cache dir": [["Print the cache directory", "kiwi cache dir"]],
  "cache verify": [["Re-hash every blob and tool entry; corrupt ones are evicted", "kiwi cache verify"]],
  "cache prune": [
    ["Remove what no lockfile on this machine references", "kiwi cache prune"],
    ["Also remove entries used in the last ten minutes", "kiwi cache prune --grace 0"],
  ],
  "cache clean": [["Remove everything kiwi stored in the cache", "kiwi cache clean"]],
  mcp: [
    ["Check every pinned MCP server against its pin (a CI gate)", "kiwi mcp verify"],
    ["See what changed in a server since it was pinned", "kiwi mcp diff everything"],
  ],
  "mcp hash": [
    ["Both interface hashes of a live server", "kiwi mcp hash everything"],
    ["Offline, from a saved wire listing", "kiwi mcp hash --listing listing.json"],
  ],
  "mcp verify": [
    ["Every pinned server", "kiwi mcp verify"],
    ["One server, failing on scan findings too", "kiwi mcp verify everything --strict"],
  ],
  "mcp pin": [
    ["Pin (or re-pin) a server's interface after a poisoning scan", "kiwi mcp pin everything"],
  ],
  "mcp approve": [
    ["Review a changed server's diff and re-pin it if you approve", "kiwi mcp approve everything"],
    ["Approve without asking (the diff is still printed)", "kiwi mcp approve everything --yes"],
  ],
  "mcp diff": [
    ["What changed in a server's interface since its pin", "kiwi mcp diff everything"],
    ["Against a saved listing instead of the live server", "kiwi mcp diff everything --listing listing.json"],
  ],
  "mcp skill": [
    ["Print a server's skill, every file checked against the pin's digests", "kiwi mcp skill docs skill://git-workflow/SKILL.md"],
    ["Write the verified files into a folder", "kiwi mcp skill docs skill://git-workflow/SKILL.md --out skills/git-workflow"],
  ],
  "mcp scan": [
    ["Scan every server's interface for poisoning", "kiwi mcp scan"],
    ["Scan a saved listing", "kiwi mcp scan --listing listing.json"],
  ],
  init: [
    ["Scaffold .ai/tools/ in the current directory (existing files are never touched)", "kiwi init"],
    ["Scaffold another directory and list what was created as JSON", "kiwi init --cwd ./my-project --json"],
    ["Scaffold without writing tool.lock.json", "kiwi init --no-lock"],
  ],
  hook: [
    ["Check staged tools before every commit", "kiwi hook install"],
    ["Stop checking before commits", "kiwi hook uninstall"],
  ],
  publish: [
    ["Push a tool version to an OCI registry under a tag (it must pass kiwi check --strict)", "kiwi publish word_count ghcr.io/acme/tools/word_count:1.0.0"],
    ["Sign it with an ed25519 key (kiwi key generate)", "kiwi publish word_count ghcr.io/acme/tools/word_count:1.0.0 --sign ~/.config/kiwi/release.key"],
  ],
  add: [
    ["Add a published tool: the tag is resolved once, the lock records the digest", "kiwi add ghcr.io/acme/tools/word_count:1.0.0"],
    ["Add exactly one artifact by digest", "kiwi add ghcr.io/acme/tools/word_count@sha256:4f1c0e4d5b8a2f7e9c3d6b1a0e8f7c6d5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e"],
    ["From a plain-HTTP registry on the office network", "kiwi add registry.lan:5000/tools/greet:latest --insecure-registry registry.lan:5000"],
    ["Import an MCP server from the official registry's server.json", "kiwi add --from server.json"],
    ["Import its remote endpoint instead of its package, under another id", "kiwi add --from server.json --pick remote --id weather"],
    ["Import an MCP bundle: its signature is verified and its files locked as the tool's", "kiwi add --from hello.mcpb"],
    ["Copy an Agent Skill folder in and check it", "kiwi add --from ~/skills/pdf-tools"],
  ],
  remove: [
    ["Take a tool added from a registry out of the project and its lockfile", "kiwi remove word_count"],
    ["Several at once: an MCP server with the remote tools that call it", "kiwi remove github_mcp github_create_pr"],
  ],
  export: [
    ["A knowledge tool as an Agent Skill folder", "kiwi export style-guide --format skill --out dist"],
    ["Skills and MCP servers as one Agent Plugin", "kiwi export style-guide github_mcp --format plugin --name acme-tools --out dist"],
    ["An MCP server's pinned package as a registry server.json", "kiwi export weather --format server.json --name io.github.acme/weather --out ."],
  ],
  outdated: [
    ["List remote tools whose tag now points elsewhere (exit 1 if any)", "kiwi outdated"],
  ],
  update: [
    ["Move a remote tool to what its tag points to now, and show what changed", "kiwi update word_count"],
  ],
  key: [
    ["Make a signing key pair", "kiwi key generate ~/.config/kiwi/release.key"],
  ],
  "key generate": [
    ["Write release.key (private, 0600) and release.key.pub", "kiwi key generate release.key"],
  ],
  "hook install": [
    ["Write .git/hooks/pre-commit (or into core.hooksPath); running it again changes nothing", "kiwi hook install"],
    ["Replace a hook kiwi did not write (it is kept as pre-commit.pre-kiwi)", "kiwi hook install --force"],
  ],
  "hook uninstall": [
    ["Remove kiwi's hook and put back any hook it replaced", "kiwi hook uninstall"],
  ],
  completion: [
    ["Complete kiwi in the current bash session", "source <(kiwi completion bash)"],
    ["Install zsh completions (a folder on $fpath)", "kiwi completion zsh > ~/.zfunc/_kiwi"],
    ["Install fish completions", "kiwi completion fish > ~/.config/fish/completions/kiwi.fish"],
  ],
};

/**
 * The EXAMPLES section for a command path, or "" when it has none. Styled like citty's headings;
 * src/cli.ts strips the colour codes when the terminal or NO_COLOR says so, as for the rest of help.
 */
export function renderExamples(path: readonly string[]): string {
  const examples = EXAMPLES[path.join(" ")];
  if (!examples?.length) return "";
  const c = pc.createColors(true);
  const lines = [c.underline(c.bold("EXAMPLES")), ""];
  for (const [description, command] of examples) lines.push(`  ${c.gray(`# ${description}`)}`, `  ${command}`, "");
  return `\n\n${lines.join("\n").trimEnd()}`;
}
