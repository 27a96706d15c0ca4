// `kiwi hash json|integrity|tool`: the interop and debugging surface over canonical JSON and tool
// integrity. Input is parsed losslessly, so what is hashed is exactly what was written.
import { defineCommand } from "./_define.ts";
import { formatDigest } from "../integrity/digest.ts";
import { hashIntegrityInput, hashJsonInput, hashTool } from "../ops/integrity-io.ts";
import { showJson, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

const input = { type: "positional", required: false, description: "A JSON file, or - (the default) for stdin", valueHint: "FILE|-" } as const;

const json = defineCommand({
  meta: { name: "json", description: "Print a JSON document's canonical text and its sha256 digest" },
  args: { input, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { canonical, digest } = await hashJsonInput(ctx, args.input);
    if (args.json) showJson({ canonical, digest });
    else showResult(`${canonical}\n${digest}`);
    return 0;
  },
});

const integrity = defineCommand({
  meta: { name: "integrity", description: "Print the integrity of {tool_id, version, manifest, files} (the vector input shape)" },
  args: { input, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    const { canonical, integrity } = await hashIntegrityInput(ctx, args.input);
    if (args.json) showJson({ integrity, canonical });
    else showResult(integrity);
    return 0;
  },
});

const tool = defineCommand({
  meta: { name: "tool", description: "Print a tool's integrity and its file entries, read from disk" },
  args: { tool: { type: "positional", required: true, description: "A tool id, or the path of its manifest or folder", valueHint: "tool-id|path" }, ...projectFlags },
  run({ args }) {
    const ctx = contextFromArgs(args);
    const { tool: found, hashed: h, canonical } = hashTool(ctx, args.tool);
    if (args.json) {
      showJson({
        tool_id: found.id,
        version: found.version,
        source: found.manifestFile,
        integrity: formatDigest(h.integrity),
        manifest_digest: formatDigest(h.manifestDigest),
        files: h.files,
        canonical,
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

