// Generates a project with N valid tools of mixed types and forms, for benchmarks:
//   bun run scripts/gen-tree.ts <dir> [--count 1000] [--files-per-tool N --file-size BYTES] [--seed 1]
// With --files-per-tool every tool is a directory tool carrying N extra data files of BYTES bytes
// each (deterministic pseudo-random content), e.g. 1000 x 10 x 10240 for a ~100 MB lock benchmark.
// Prints a JSON summary (tools, files, bytes) on stdout.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface Options {
  dir: string;
  count: number;
  filesPerTool: number;
  fileSize: number;
  seed: number;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { dir: "", count: 1000, filesPerTool: 0, fileSize: 1024, seed: 1 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = Number(argv[++i]);
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${arg} needs a non-negative integer`);
      return v;
    };
    if (arg === "--count") opts.count = value();
    else if (arg === "--files-per-tool") opts.filesPerTool = value();
    else if (arg === "--file-size") opts.fileSize = value();
    else if (arg === "--seed") opts.seed = value();
    else if (arg.startsWith("-")) throw new Error(`unknown flag ${arg}`);
    else opts.dir = arg;
  }
  if (!opts.dir) throw new Error("usage: gen-tree.ts <dir> [--count N] [--files-per-tool N --file-size BYTES] [--seed S]");
  return opts;
}

/** xorshift32: fast, deterministic bytes for data files. */
function randomBytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 0x9e3779b9;
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
    if (i + 1 < size) out[i + 1] = (x >>> 8) & 0xff;
    if (i + 2 < size) out[i + 2] = (x >>> 16) & 0xff;
    if (i + 3 < size) out[i + 3] = (x >>> 24) & 0xff;
  }
  return out;
}

/** The kinds of tool the tree cycles through; each is valid under `kiwi check`. */
const KINDS = ["py_dir", "sh_dir", "py_embedded", "sh_embedded", "api", "mcp_server", "mcp_tool", "runtime", "knowledge", "magray_script", "magray_wasm"] as const;
type Kind = (typeof KINDS)[number];

const params = `parameters:
  - { name: input, type: string, required: true, non_empty: true, description: What to process }
  - { name: limit, type: integer, default: 10, minimum: 1, maximum: 100 }
  - { name: mode, type: string, enum: [fast, slow], default: fast }
`;

function writeTool(root: string, kind: Kind, i: number, opts: Options): { files: number; bytes: number } {
  const id = `${kind.replace(/_/g, "-")}-${String(i).padStart(5, "0")}`;
  const group = join(root, `group-${String(i % 20).padStart(2, "0")}`);
  let files = 0;
  let bytes = 0;
  const write = (path: string, content: string | Uint8Array) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, content);
    files++;
    bytes += typeof content === "string" ? Buffer.byteLength(content) : content.length;
  };
  // With data files, every kind becomes a directory tool so each can carry them.
  const dirMode = opts.filesPerTool > 0;
  const dir = join(group, id);
  const manifest = (text: string, name = `${id}.yaml`) => write(dirMode ? join(dir, "tool.yaml") : join(group, name), text);
  switch (kind) {
    case "py_dir":
    case "py_embedded":
      if (kind === "py_dir" || dirMode) {
        write(join(dir, "tool.yaml"), `tool_id: ${id}\ntool_type: script\nversion: 1.${i % 10}.0\nexecutor: python_runtime@^1\ndescription: Processes data (${i})\nconfig:\n  entrypoint: main.py\n${params}requires:\n  - { fs.read: [./data] }\nlimits: { memory_mb: 256, timeout_ms: 30000 }\n`);
        write(join(dir, "main.py"), `import json, sys\n\ndef main():\n    args = json.load(sys.stdin)\n    print(json.dumps({"n": len(args.get("input", ""))}))\n\nif __name__ == "__main__":\n    main()\n`);
      } else {
        write(join(group, `${id.replace(/-/g, "_")}.py`), `#!/usr/bin/env python3\n"""\ntool_id: ${id}\ntool_type: script\nversion: 1.0.${i % 10}\nexecutor: python_runtime\ndescription: Embedded-metadata script ${i}\n${params}"""\nimport sys\nprint(sys.stdin.read().upper())\n`);
      }
      break;
    case "sh_dir":
    case "sh_embedded":
      if (kind === "sh_dir" || dirMode) {
        write(join(dir, "tool.yaml"), `tool_id: ${id}\ntool_type: script\nversion: 2.0.${i % 10}\nexecutor: bash_runtime\nconfig:\n  entrypoint: run.sh\n${params}`);
        write(join(dir, "run.sh"), `#!/usr/bin/env bash\nset -euo pipefail\nread -r line || true\nif [ -n "$line" ]; then echo "got: $line"; else echo empty; fi\n`);
      } else {
        write(join(group, `${id.replace(/-/g, "_")}.sh`), `#!/usr/bin/env bash\n# ---\n# tool_id: ${id}\n# tool_type: script\n# version: 0.${i % 10}.1\n# executor: bash_runtime\n# ---\nfor word in "$@"; do echo "$word"; done\n`);
      }
      break;
    case "api":
      manifest(`tool_id: ${id}\ntool_type: api\nversion: 1.0.0\nexecutor: http_client\nconfig:\n  method: GET\n  url_template: https://api.example.com/v1/items/{input}?limit={limit}\n  headers: { Authorization: "Bearer \${API_TOKEN}" }\n${params}requires:\n  - { net.outbound: [api.example.com] }\n`);
      break;
    case "mcp_server":
      manifest(`tool_id: ${id}\ntool_type: mcp_server\nversion: 1.2.0\nexecutor: subprocess\nconfig:\n  transport: stdio\n  command: npx\n  args: ["-y", "@modelcontextprotocol/server-everything"]\nrequires:\n  - net.outbound: [registry.npmjs.org]\n  - fs.write: ["~/.npm"]\nvalidation:\n  child_schemas:\n    - match: { tool_type: mcp_tool }\n      schema: { type: object, required: [config], properties: { config: { type: object, required: [tool_name] } } }\n`);
      break;
    case "mcp_tool": {
      // Served by the mcp_server generated just before it.
      const server = `mcp-server-${String(i - 1).padStart(5, "0")}`;
      manifest(`tool_id: ${id}\ntool_type: mcp_tool\nversion: 1.0.0\nexecutor: ${server}\nconfig:\n  tool_name: echo\n${params}`);
      break;
    }
    case "runtime":
      manifest(`tool_id: ${id}\ntool_type: runtime\nversion: 3.1.${i % 10}\nexecutor: subprocess\nconfig:\n  command: python3\n  args: ["-B"]\nvalidation:\n  child_schemas:\n    - match: { tool_type: script }\n      schema:\n        type: object\n        properties:\n          config: { type: object, properties: { entrypoint: { type: string, pattern: "\\\\.py$" } } }\n`);
      break;
    case "knowledge": {
      const text = `---\ntool_id: ${id}\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\ndescription: Notes ${i}\n---\n# Notes ${i}\n\nSome knowledge for agents.\n`;
      if (dirMode) {
        write(join(dir, "tool.yaml"), `tool_id: ${id}\ntool_type: knowledge\nversion: 1.0.0\nexecutor: null\nconfig:\n  entrypoint: notes.md\n`);
        write(join(dir, "notes.md"), text);
      } else write(join(group, `${id}.md`), text);
      break;
    }
    case "magray_script":
      write(join(dir, "tool.json"), `${JSON.stringify({ name: id, version: "1.0.0", description: `magray script ${i}`, type: "script", capabilities: ["filesystem"], entry_point: "main.py", runtime_config: { max_memory_mb: 128, max_execution_time_ms: 30000 }, permissions: { filesystem: ["read"] }, metadata: { author: "bench", license: "MIT", repository: "https://example.com/tools", documentation: "https://example.com/docs" } }, null, 2)}\n`);
      write(join(dir, "main.py"), "print('hello')\n");
      break;
    case "magray_wasm":
      write(join(dir, "tool.json"), `${JSON.stringify({ name: id, version: "0.3.0", description: `magray wasm ${i}`, type: "wasm", entry_point: "tool.wasm", runtime_config: { max_memory_mb: 64, fuel_limit: 1000000 }, metadata: { author: "bench", license: "MIT", repository: "https://example.com/tools", documentation: "https://example.com/docs" } }, null, 2)}\n`);
      write(join(dir, "tool.wasm"), new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
      break;
  }
  for (let f = 0; f < opts.filesPerTool; f++) write(join(dir, "data", `part-${String(f).padStart(4, "0")}.bin`), randomBytes(opts.fileSize, opts.seed * 1_000_003 + i * 7919 + f));
  return { files, bytes };
}

/** Writes the tree; returns what it wrote. */
export function generateTree(opts: Options): { root: string; tools: number; files: number; bytes: number } {
  const root = join(opts.dir, ".ai", "tools");
  mkdirSync(root, { recursive: true });
  let files = 0;
  let bytes = 0;
  for (let i = 0; i < opts.count; i++) {
    const kind = KINDS[i % KINDS.length]!;
    // An mcp_tool needs the server written just before it; the cycle guarantees that except at i = 0.
    const written = writeTool(root, kind === "mcp_tool" && i === 0 ? "api" : kind, i, opts);
    files += written.files;
    bytes += written.bytes;
  }
  return { root: opts.dir, tools: opts.count, files, bytes };
}

if (import.meta.main) {
  try {
    const summary = generateTree(parseArgs(process.argv.slice(2)));
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    process.stderr.write(`gen-tree: ${(error as Error).message}\n`);
    process.exit(2);
  }
}
