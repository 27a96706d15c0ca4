// `kiwi hash json|integrity|tool`: the interop and debugging surface over canonical JSON and tool
// integrity. Input is parsed losslessly, so what is hashed is exactly what was written.
import { defineCommand } from "./_define.ts";
import { formatDigest, hashCanonical } from "../integrity/digest.ts";
import { hashReferenceIntegrity } from "../integrity/tool.ts";
import { integrityText } from "../lockfile/build.ts";
import { checkIntegrityInput, parseHashInput } from "../lockfile/hash-inputs.ts";
import { readInputText } from "../lockfile/input-io.ts";
import { findTool, hashProjectTools } from "../lockfile/hash-tree-io.ts";
import { readProject } from "../manifest/discover-io.ts";
import { showJson, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

const input = { type: "positional", required: false, description: "A JSON file, or - (the default) for stdin", valueHint: "FILE|-" } as const;

const json = defineCommand({
  meta: { name: "json", description: "Print a JSON document's canonical text and its sha256 digest" },
  args: { input, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { text, subject } = await readInputText(args.input, ctx.cwd);
    const { canonical, hex } = hashCanonical(parseHashInput(text, subject));
    if (args.json) showJson({ canonical, digest: formatDigest(hex) });
    else showResult(`${canonical}\n${formatDigest(hex)}`);
    return 0;
  },
});

const integrity = defineCommand({
  meta: { name: "integrity", description: "Print the integrity of {tool_id, version, manifest, files} (the vector input shape)" },
  args: { input, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { text, subject } = await readInputText(args.input, ctx.cwd);
    const { canonical, hex } = hashReferenceIntegrity(checkIntegrityInput(parseHashInput(text, subject), subject));
    if (args.json) showJson({ integrity: formatDigest(hex), canonical });
    else showResult(formatDigest(hex));
    return 0;
  },
});

const tool = defineCommand({
  meta: { name: "tool", description: "Print a tool's integrity and its file entries, read from disk" },
  args: { tool: { type: "positional", required: true, description: "A tool id, or the path of its manifest or folder", valueHint: "tool-id|path" }, ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const project = readProject(ctx.cwd, { cacheDir: ctx.cacheDir });
    const found = findTool(project, args.tool, ctx.cwd);
    const [hashed] = hashProjectTools({ ...project, tools: [found] });
    const h = hashed!;
    if (args.json) {
      showJson({
        tool_id: found.id,
        version: found.version,
        source: found.manifestFile,
        integrity: formatDigest(h.integrity),
        manifest_digest: formatDigest(h.manifestDigest),
        files: h.files,
        canonical: integrityText(h),
      });
    } else {
      const lines = [`${formatDigest(h.integrity)}  ${found.id}@${found.version}  ${found.manifestFile}`];
      for (const f of h.files) lines.push(`${f.sha256}  ${f.is_executable ? "x" : "-"}  ${f.path}`);
      showResult(lines.join("\n"));
    }
    return 0;
  },
});

export default defineCommand({
  meta: { name: "hash", description: "Canonical JSON, digests and tool integrity (interop and debugging)" },
  subCommands: { json, integrity, tool },
});

