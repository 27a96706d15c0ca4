// THE table of every rule id kiwi reports (discovery, parsing, validation), with its default
// severity, a one-line description and an example. SARIF rule metadata and the README list read it.
import type { Severity } from "./verdict.ts";

export interface RuleInfo {
  severity: Severity;
  /** True when `--strict` turns the rule's warnings into errors. */
  strict?: true;
  /**
   * True for an error a `# kiwi-ignore:` comment may let through: one about what the manifest's
   * text looks like (an example key), never one kiwi cannot lock or run past. Warnings and infos
   * always may (isIgnorable).
   */
  ignorable?: true;
  /**
   * True when some of the rule's findings are warnings though the rule is an error (skill/field:
   * an unknown field): those may be ignored like any warning, its errors may not.
   */
  warnsToo?: true;
  description: string;
  /** A short example of input that triggers the rule. */
  example: string;
}

/** Every rule id, grouped by layer. Ids are stable: they appear in SARIF and users' CI filters. */
export const RULES = {
  // Parsing (src/manifest/forms.ts, yaml.ts; src/integrity/json-lossless.ts)
  "parse/syntax": { severity: "error", description: "The manifest is not valid YAML or JSON (or an embedded block is never closed).", example: "tool_id: [unclosed" },
  "parse/duplicate-key": { severity: "error", description: "A key appears twice in one mapping.", example: "version: 1.0.0\nversion: 1.0.1" },
  "parse/alias-bomb": { severity: "error", description: "YAML aliases expand the document past 100,000 nodes (billion laughs).", example: "a: &a [x, x]\nb: &b [*a, *a]\n# ...nine more levels" },
  "parse/too-deep": { severity: "error", description: "The document nests deeper than 256 levels.", example: "[[[[[[ ... 10,000 levels ... ]]]]]]" },
  "parse/non-finite": { severity: "error", description: "A YAML number is .inf or .nan, which JSON cannot represent.", example: "limits: { timeout_ms: .inf }" },
  "parse/empty": { severity: "error", description: "The manifest file is empty.", example: "(a zero-byte tool.yaml)" },
  "parse/too-large": { severity: "error", description: "The manifest is larger than 1 MiB.", example: "(a 10 MB tool.json)" },
  "parse/binary": { severity: "error", description: "The manifest contains NUL bytes.", example: "(a PNG renamed to tool.yaml)" },
  "parse/encoding": { severity: "error", description: "The manifest is not valid UTF-8.", example: "(a Latin-1 file with byte 0xE9)" },
  // Discovery (src/manifest/discover-io.ts)
  "discover/ambiguous-manifest": { severity: "error", description: "A directory holds more than one of tool.yaml, tool.yml and tool.json.", example: "fetch/tool.yaml + fetch/tool.json" },
  // Agent Skills and Agent Plugins (src/manifest/skill.ts, plugin.ts)
  "skill/front-matter": { severity: "error", description: "A SKILL.md does not open with YAML front matter.", example: "# My skill (no --- block)" },
  "skill/name": { severity: "error", description: "A skill's name is missing, is not 1-64 lower-case letters, digits and hyphens, or differs from its folder's name.", example: "pdf-tools/SKILL.md with name: pdf" },
  "skill/description": { severity: "error", description: "A skill's description is missing, empty or longer than 1024 characters.", example: "name: pdf-tools (no description)" },
  "skill/field": { severity: "error", warnsToo: true, description: "A front-matter field has the wrong type (metadata not a string map, allowed-tools not a string); an unknown field is a warning.", example: "metadata: { version: 1.0 }" },
  "skill/path-escape": { severity: "error", description: "A relative link in SKILL.md points outside the skill's folder, where kiwi locks nothing.", example: "[config](../../shared/config.md)" },
  "plugin/manifest": { severity: "error", description: "An Agent Plugin's plugin.json violates the spec ($schema, name, a field of the wrong type): the plugin is rejected and none of its components read.", example: "{ \"name\": \"My Plugin\" }" },
  "plugin/field": { severity: "warning", description: "plugin.json has a field the spec does not define (reported and ignored), or a component location of the wrong kind.", example: "{ \"$schema\": \"…/1.0.0/plugin.schema.json\", \"name\": \"p\", \"hooks\": {} }" },
  "plugin/claude-code": { severity: "info", description: "A Claude Code plugin (.claude-plugin/plugin.json) has components kiwi does not read: commands, agents, hooks and the like are Claude Code's own; its skills (skills/, plugin.json skills) and MCP servers (.mcp.json, plugin.json mcpServers) are read as tools.", example: ".ai/tools/p/.claude-plugin/plugin.json beside commands/ and hooks/" },
  "plugin/mcp": { severity: "warning", description: "A plugin's mcp.json (or a Claude Code plugin's .mcp.json or plugin.json mcpServers) is invalid (its servers are not read) or one server entry is (that server is skipped), as the spec says.", example: "\"srv\": { \"type\": \"stdio\", \"command\": \"node server.js\" }" },
  "discover/unreadable": { severity: "error", description: "A file or folder under .ai/tools/ cannot be read.", example: "(a FIFO or a file without read permission)" },
  "kiwi_mcp/non-literal": { severity: "error", description: "A kiwi_mcp Python tool's metadata variable (__version__, __tool_type__, CONFIG_SCHEMA, ...) is not a literal; kiwi reads the file, it never runs it.", example: "__version__ = get_version()" },
  "kiwi_mcp/signature-stale": { severity: "warning", description: "A kiwi_mcp Python tool's `# kiwi-mcp:validated:` hash no longer matches the file: it changed after it was signed.", example: "# kiwi-mcp:validated:2026-01-26T04:13:30Z:<hash of an older body>" },
  "kiwi_mcp/signature-invalid": { severity: "warning", description: "A `# kiwi-mcp:validated:` line whose hash is not 12 or 64 lowercase hex digits.", example: "# kiwi-mcp:validated:2026-01-26T04:13:30Z:xyz" },
  "discover/no-metadata": { severity: "info", description: "A .py, .sh or .md file has no embedded metadata, so it is not a tool.", example: "helper.py without a YAML docstring" },
  "security/symlink": { severity: "warning", description: "A symbolic link outside a directory tool is not followed.", example: ".ai/tools/x.yaml -> ../../x.yaml" },
  "security/symlink-loop": { severity: "error", description: "A symbolic link inside a tool loops.", example: "a -> b, b -> a" },
  "security/symlink-broken": { severity: "error", description: "A symbolic link inside a tool points at nothing.", example: "data.csv -> missing.csv" },
  "security/symlink-escape": { severity: "error", description: "A symbolic link inside a tool resolves outside the tool directory.", example: "secrets -> /etc" },
  // Universal
  "universal/not-a-mapping": { severity: "error", description: "The manifest document is not a mapping of fields.", example: "- just\n- a list" },
  "universal/field-type": { severity: "error", description: "A field has the wrong type or shape for the manifest format.", example: "description: [not, a, string]" },
  "universal/alias-conflict": { severity: "error", description: "Two spellings of one field (config.tool_name and config.mcp_tool_name, config.entrypoint and a top-level entrypoint, executor and executor_id, ...) are both written, with different values.", example: "config: { tool_name: a, mcp_tool_name: b }" },
  "universal/unknown-field": { severity: "warning", description: "A top-level field is not part of the manifest format (often a typo).", example: "tool_tpye: script" },
  "universal/id-format": { severity: "error", description: "The tool id is not 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter.", example: "tool_id: My Tool" },
  "universal/type-unknown": { severity: "error", description: "The tool type is missing or not one kiwi knows.", example: "tool_type: scirpt" },
  "universal/version-semver": { severity: "error", description: "The version is not a semantic version (MAJOR.MINOR.PATCH, pre-release allowed).", example: "version: 1.0" },
  "universal/executor-required": { severity: "error", description: "The tool type needs an executor and none is given.", example: "tool_type: script  # no executor" },
  "universal/executor-forbidden": { severity: "error", description: "Primitives and knowledge run nothing, so their executor must be null.", example: "tool_type: knowledge\nexecutor: python_runtime" },
  "universal/duplicate-id": { severity: "error", description: "Two tools in the tree have the same id.", example: "a/tool.yaml and b.yaml both say tool_id: fetch" },
  "universal/shadows-primitive": { severity: "error", description: "A project tool takes the id of a built-in primitive (subprocess, http_client), or a remote tool the id of any built-in, which it may not replace.", example: ".ai/tools/subprocess.yaml" },
  "security/reserved-key": { severity: "error", description: "A key such as __proto__, constructor or prototype appears in the manifest.", example: "config: { __proto__: { admin: true } }" },
  // Per type
  "entrypoint/required": { severity: "error", description: "A script, wasm or native tool declares no entry point.", example: "tool_type: script\nconfig: {}" },
  "entrypoint/not-found": { severity: "error", description: "The entry point is not a file inside the tool directory.", example: "config: { entrypoint: main.py }  # no main.py" },
  "entrypoint/extension": { severity: "error", description: "A wasm entry point must end in .wasm; a native one must not.", example: "type: wasm\nentry_point: tool.exe" },
  "script/executor-runtime": { severity: "error", description: "A script's executor must be a runtime.", example: "tool_type: script\nexecutor: http_client" },
  "mcp_server/fetches-at-start": { severity: "warning", description: "A stdio MCP server started by npx, uvx, pipx or uv run (which download it, or its dependencies, at start) declares no net.outbound, so it cannot start in the sandbox.", example: "config: { command: npx, args: [-y, some-server] }" },
  "mcp_tool/unknown-name": { severity: "error", description: "An mcp_tool's config.tool_name is not in its server's pinned interface.", example: "config: { tool_name: read_grpah }" },
  "script/language-mismatch": { severity: "error", description: "The declared language (language, manifest.language) is not the language of the entry point's extension.", example: "manifest: { language: python, entrypoint: run.sh }" },
  "script/runtime-language": { severity: "error", description: "A script's entry point is in another language than its kiwi runtime runs (a .sh file on python_runtime).", example: "executor: python_runtime\nconfig: { entrypoint: main.sh }" },
  "script/syntax": { severity: "error", description: "A .py or .sh entry point has a syntax error (checked without running it).", example: "def f(:" },
  "script/interpreter-missing": { severity: "warning", description: "python3 or bash is not installed, so scripts were not syntax-checked.", example: "(no python3 on PATH)" },
  "api/executor": { severity: "error", description: "An api tool's executor must be http_client.", example: "tool_type: api\nexecutor: subprocess" },
  "api/method": { severity: "error", description: "The HTTP method is not GET, POST, PUT, PATCH, DELETE or HEAD.", example: "config: { method: FETCH }" },
  "api/url": { severity: "error", description: "config.url or config.url_template is missing, not an absolute http(s) URL, or puts a {param} in its scheme or host.", example: "config: { url: /v1/weather }" },
  "api/host-undeclared": { severity: "error", description: "The host config.url or config.url_template names is not among the tool's declared net.outbound hosts, so kiwi exec refuses every call.", example: "url: https://api.weather.gov/points\nrequires: [{ net.outbound: [api.weather.com] }]" },
  "api/placeholder": { severity: "error", description: "A {param} placeholder in the URL, headers or body is not a declared parameter.", example: "url_template: https://x.test/{city}  # no city parameter" },
  "api/header-name": { severity: "error", description: "A config.headers name (of an api tool or an HTTP MCP server) is not a valid HTTP header name (an RFC 9110 token), so every call would be refused.", example: "headers: { \"X Api Key\": \"${KEY}\" }" },
  "api/response-transform": { severity: "error", description: "config.response_transform is not a path of the JSONPath subset kiwi exec applies ($, .name, ['name'], [n], [a:b], [*]), so every call would be refused.", example: "response_transform: $..daily" },
  "mcp_server/transport": { severity: "error", description: "The MCP transport is missing or not stdio, streamable-http or sse.", example: "config: { transport: websocket }" },
  "mcp_server/command": { severity: "error", description: "A stdio MCP server needs config.command.", example: "config: { transport: stdio }" },
  "mcp_server/url": { severity: "error", description: "An HTTP MCP server needs an absolute config.url.", example: "config: { transport: sse }" },
  "mcp_server/executor": { severity: "error", description: "An MCP server runs on subprocess (stdio) or http_client (streamable-http, sse).", example: "transport: stdio\nexecutor: http_client" },
  "mcp_tool/executor": { severity: "error", description: "An mcp_tool's executor must be an mcp_server.", example: "tool_type: mcp_tool\nexecutor: subprocess" },
  "mcp_tool/name": { severity: "error", description: "An mcp_tool must name the server's tool in config.tool_name.", example: "tool_type: mcp_tool\nconfig: {}" },
  "config/command-param": { severity: "error", description: "config.command uses a {param}: parameters never choose the program, so kiwi exec refuses every call.", example: "config: { command: \"{interpreter}\" }" },
  "config/env-name": { severity: "error", description: "A config.env name is empty or holds '=' or NUL, which no environment can carry, so kiwi exec refuses every call.", example: "env: { \"A=B\": x }" },
  "config/stdin": { severity: "error", description: "config.stdin is not json, none or inherit.", example: "config: { stdin: pipe }" },
  "config/cwd": { severity: "error", description: "config.cwd names no folder holding the tool's files, so the tool cannot start there (its run directory holds only its files).", example: "config: { entrypoint: main.py, cwd: work }" },
  "runtime/executor": { severity: "error", description: "A runtime's executor must be a primitive (subprocess or http_client).", example: "tool_type: runtime\nexecutor: python_runtime" },
  "runtime/endpoint": { severity: "error", description: "A runtime needs config.command (subprocess) or config.url (http_client).", example: "tool_type: runtime\nconfig: {}" },
  "knowledge/format": { severity: "error", description: "A knowledge tool must be Markdown with YAML front matter.", example: "knowledge written as notes.yaml" },
  "primitive/not-builtin": { severity: "error", description: "Only kiwi's built-in primitives (subprocess, http_client) execute.", example: "tool_type: primitive\ntool_id: my_spawner" },
  // Security and consistency (magray's rules)
  "magray/missing-field": { severity: "error", description: "A field magray requires (name, version, description, entry_point, metadata.author, metadata.license) is missing or empty.", example: '"description": ""' },
  "magray/version": { severity: "error", description: "A magray version is not exactly MAJOR.MINOR.PATCH of numbers without leading zeros.", example: '"version": "1.2.3-beta"' },
  "magray/name": { severity: "error", description: "A magray name has characters other than letters, digits, '-' and '_', or starts or ends with '-'.", example: '"name": "Bad Name"' },
  "magray/name-not-an-id": { severity: "error", description: "magray accepts the name, but kiwi cannot use it as a tool id (upper case, Unicode letters, a leading digit).", example: '"name": "Café"' },
  "magray/type-entry": { severity: "error", description: "The entry point does not fit the type: a wasm entry point ends in .wasm, a native one does not, a script's (in strict mode) is .py, .js, .sh, .ps1 or .rb.", example: '"type": "wasm", "entry_point": "tool.exe"' },
  "magray/capability-required": { severity: "error", description: "In strict mode a magray tool must declare at least one capability.", example: '"capabilities": []' },
  "magray/advice": { severity: "warning", description: "magray's own warnings: no repository or documentation URL, memory over 256 MB, a timeout over 60 s, shell access, more than three capabilities.", example: '"metadata": { "author": "A", "license": "MIT" }' },
  "deps/requirement": { severity: "error", description: "A package requirement kiwi cannot read: no ecosystem, not an npm name, a tag or URL instead of a version, a config.package without an exact version.", example: "requires: [npm:left-pad@latest]" },
  "deps/conflict": { severity: "error", description: "One package is required twice with different ranges.", example: "requires: [npm:a@^1, npm:a@^2]" },
  "deps/installed-folder": { severity: "error", description: "A tool that declares packages has its own node_modules/ or site-packages/ (npm install or pip install --target run in the tool): kiwi installs the declared packages there at exec, so the folder would be hashed as the tool's files and refused.", example: ".ai/tools/pad/node_modules/left-pad/index.js" },
  "security/capability-unknown": { severity: "error", description: "A declared capability is not one kiwi knows.", example: "requires: [{ fs.exec: [./bin] }]" },
  "security/capability-permission": { severity: "error", description: "A magray capability has no matching permissions entry.", example: '"capabilities": ["network"], "permissions": {}' },
  "security/host-invalid": { severity: "error", description: "A net.outbound entry is not a host name, wildcard, IP address or CIDR range (a URL with a path, a bad port): it would match nothing, so exec refuses the tool.", example: "requires: [{ net.outbound: [api.example.com/v1] }]" },
  "security/host-any": { severity: "warning", strict: true, description: "net.outbound admits every host (*, or a /0 range): exec runs the tool only with --allow-any-host, and private addresses stay refused.", example: "requires: [{ net.outbound: ['*'] }]" },
  "security/capability-path": { severity: "error", description: "An fs.read or fs.write path the sandbox cannot grant: / (the whole file system) or a path in /proc, /sys or /dev (the sandbox has its own), so exec refuses the tool.", example: "requires: [{ fs.read: [/proc/self] }]" },
  "security/capability-unscoped": { severity: "warning", description: "A filesystem or network capability names no paths or hosts, so it grants everything.", example: "requires: [net.outbound]" },
  "security/limits": { severity: "error", description: "A resource limit is outside its documented bounds.", example: "runtime_config: { max_memory_mb: 4096 }" },
  "security/limits-high": { severity: "warning", strict: true, description: "A memory or time limit is above the strict threshold (512 MB, 120 s).", example: "limits: { memory_mb: 1024 }" },
  "security/secret-literal": { severity: "error", ignorable: true, description: "A value in the manifest, or a line of any text file of the tool, has the form of a known credential (a GitHub, GitLab, npm, PyPI, Slack, AWS, Google, OpenAI, Anthropic or Stripe key, a JWT, a private key): the manifest and the files are committed with the tool (in a remote tool, which is not, a warning). A placeholder in a key's place (ghp_XXXXXXXX…, AKIAIOSFODNN7EXAMPLE, xoxb-your-token-here) is not.", example: "config: { env: { GH_TOKEN: ghp_… } }" },
  "security/secret-value": { severity: "warning", strict: true, description: "A config.env variable or an HTTP header whose name says it is secret holds a literal, random-looking value instead of a ${VAR} reference (a variable whose name ends in PASSWORD: any literal): most likely a key or a password, committed with the tool.", example: "config: { env: { API_KEY: 3f9a7c2e5b8d1f4a6c0e9b7d2a5f8c1e } }" },
  "security/remote-committed": { severity: "error", description: "A commit stages files of a remote tool (.ai/tools/.remote/<tool>/): those come from a registry, pinned by tool.lock.json and put back by kiwi install, and are never committed (the staged check only).", example: "git add -f .ai/tools/.remote/crawl/crawl.yaml" },
  "security/remote-unlocked": { severity: "error", description: "A tool is in .ai/tools/.remote/, where kiwi add and kiwi install place a registry's tools, but tool.lock.json records no remote tool of its id: it was put there by hand or committed, so it is checked as the project's own (a credential in it is an error, not its publisher's warning). kiwi check only, which reads the lockfile.", example: ".ai/tools/.remote/crawl/ with no \"crawl\" under \"remote\" in tool.lock.json" },
  "security/secret-in-args": { severity: "warning", strict: true, description: "A secret (a ${VAR} whose name looks secret, or one config.secrets names, or a {parameter} whose name says it is a token, a password or a key) is passed as a command-line argument, which any local user can read in /proc; config.env or stdin keeps it out of sight.", example: 'config: { args: ["--token", "${GITHUB_TOKEN}"] }' },
  "security/risky-combination": { severity: "warning", strict: true, description: "The tool asks for shell, network and filesystem access together.", example: "requires: [shell.execute, net.outbound, fs.write]" },
  "security/path": { severity: "error", description: "An entry point or file path is absolute, contains '..', or leaves the tool directory.", example: "entry_point: ../../bin/sh" },
  // Chain
  "chain/missing-executor": { severity: "error", description: "The executor names no tool in the tree or the built-ins.", example: "executor: pyhton_runtime" },
  "chain/version-range": { severity: "error", description: "The executor's version range is not a valid semver range.", example: "executor: python_runtime@^^1" },
  "chain/version-mismatch": { severity: "error", description: "The executor exists but its version does not satisfy the range.", example: "executor: python_runtime@^2  # python_runtime is 1.0.0" },
  "chain/cycle": { severity: "error", description: "Executors form a cycle (the path is reported).", example: "a -> b -> a" },
  "chain/too-deep": { severity: "error", description: "The executor chain is longer than 16 links.", example: "t1 -> t2 -> ... -> t17" },
  "chain/no-primitive": { severity: "error", description: "The chain ends in a tool that is not a primitive.", example: "executor: my_notes  # a knowledge tool" },
  "chain/broken": { severity: "error", description: "The chain breaks further down, at a tool not being checked.", example: "kiwi check a  # a -> b, and b's executor is missing" },
  "child-schema/missing": { severity: "warning", strict: true, description: "An executor with children declares no validation.child_schemas.", example: "tool_type: runtime  # no validation.child_schemas" },
  "child-schema/invalid": { severity: "error", description: "validation.child_schemas is malformed, or a schema in it does not compile safely.", example: "child_schemas: [{ match: {}, schema: { pattern: '(a+)+' } }]" },
  "child-schema/no-match": { severity: "error", description: "No child_schemas entry of the executor matches this tool.", example: "an mcp_server whose executor only lists scripts" },
  "child-schema/mismatch": { severity: "error", description: "The tool's manifest, as written, violates the matching child schema of its executor.", example: "entrypoint: main.rb  # python_runtime wants \\.py$" },
  // Parameters
  "parameters/not-a-list": { severity: "error", description: "parameters must be a list of declarations.", example: "parameters: { city: string }" },
  "parameters/entry": { severity: "error", description: "A parameter declaration is not a mapping.", example: "parameters: [city]" },
  "parameters/name": { severity: "error", description: "A parameter name is missing or not an identifier.", example: "- name: 'my city'" },
  "parameters/duplicate-name": { severity: "error", description: "Two parameters share a name.", example: "- name: city\n- name: city" },
  "parameters/type": { severity: "error", description: "The parameter type is missing or not string, integer, number, boolean, array or object.", example: "type: text" },
  "parameters/default": { severity: "error", description: "The default does not satisfy the parameter's own type and contracts.", example: "type: integer\ndefault: ten" },
  "parameters/enum": { severity: "error", description: "enum is not a non-empty list of distinct values of the parameter's type.", example: "type: integer\nenum: [a, b]" },
  "parameters/constraint": { severity: "error", description: "A contract (minLength, minimum, …) has the wrong type, does not apply to the type, or min > max.", example: "minLength: 5\nmaxLength: 2" },
  "parameters/pattern": { severity: "error", description: "The pattern is not a valid regular expression or can backtrack catastrophically.", example: "pattern: '^(a|a)*$'" },
  "parameters/format": { severity: "error", description: "format is not uuid, email, uri or date-time, or is set on a non-string.", example: "format: phone" },
  "parameters/file": { severity: "error", description: "parameters names a file that is not in the tool's folder, cannot be read, or holds neither a parameters list nor a JSON Schema.", example: "parameters: params.yaml  # no such file" },
  "parameters/unknown-field": { severity: "warning", description: "A parameter declaration has a field kiwi does not know (often a typo).", example: "requried: true" },
  // Ignore comments (src/validate/ignores.ts)
  "ignore/invalid": { severity: "warning", description: "A `# kiwi-ignore:` comment names no rule, something that is not a rule id, a rule kiwi does not have, or an error that cannot be ignored: it ignores nothing of that. Likewise an entry of `.ai/kiwi-ignore.yaml` (or the file itself) kiwi cannot read as written: a misspelt key, a tool the project does not have, a line without its file.", example: "# kiwi-ignore: security/secret-litteral" },
  "ignore/expired": { severity: "warning", description: "An entry of `.ai/kiwi-ignore.yaml` has an `expires` date that has come (UTC): it ignores nothing now, so what it let through is reported again. Fix that, or give the entry a later date if its reason still holds.", example: "- { rule: security/host-any, tool: crawl, reason: until the proxy lands, expires: 2026-01-31 }" },
  "ignore/unused": { severity: "warning", description: "A `# kiwi-ignore:` comment names a rule that reports nothing on the line it covers, or an entry of `.ai/kiwi-ignore.yaml` matches no finding: the finding is gone (or the comment is on the wrong line), and the comment or entry would hide a new one.", example: "GH_TOKEN: ${GH_TOKEN}  # kiwi-ignore: security/secret-literal" },
} as const satisfies Record<string, RuleInfo>;

export type RuleId = keyof typeof RULES;

/** The rule's metadata; unknown ids (a bug) fall back to an error so nothing is hidden. */
export function ruleInfo(id: string): RuleInfo {
  return (RULES as Record<string, RuleInfo>)[id] ?? { severity: "error", description: id, example: "" };
}

/**
 * Whether a `# kiwi-ignore:` comment may let a finding of this rule through: warnings and infos, and
 * the errors the table marks ignorable. Not the ignore rules themselves, and not an unknown id.
 * With a finding's `severity`, whether that finding may be; without one, whether any of the rule's
 * may (a rule that warnsToo: its warnings).
 */
export function isIgnorable(id: string, severity?: Severity): boolean {
  const info = (RULES as Record<string, RuleInfo>)[id];
  if (info === undefined || id.startsWith("ignore/")) return false;
  if (info.severity !== "error" || info.ignorable === true) return true;
  return info.warnsToo === true && severity !== "error";
}

/** Every rule id, in table order. */
export function ruleIds(): string[] {
  return Object.keys(RULES);
}

/** The README's rule table, as Markdown (the README must list every id; a test checks it). */
export function renderRulesMarkdown(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, "<br>");
  const lines = ["| Rule | Severity | What it means | Example |", "| --- | --- | --- | --- |"];
  for (const [id, info] of Object.entries(RULES) as [string, RuleInfo][]) {
    const severity = info.strict ? `${info.severity} (error with --strict)` : info.ignorable ? `${info.severity} (ignorable)` : info.severity;
    lines.push(`| \`${id}\` | ${severity} | ${cell(info.description)} | <code>${cell(escapeHtml(info.example))}</code> |`);
  }
  return `${lines.join("\n")}\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
