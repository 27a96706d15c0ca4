// `kiwi export <tool>… --format skill|plugin|server.json --out <dir>`: a tool written back out in
// the ecosystem's formats (formats/export-plan.ts).
import { plural } from "../ui/plural.ts";
import { defineCommand } from "./_define.ts";
import { VARIADIC } from "./_args.ts";
import { KiwiError } from "../errors.ts";
import { exportTools } from "../ops/export-io.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

export default defineCommand({
  meta: { name: "export", description: "Write tools out as an Agent Skill, an Agent Plugin or an MCP registry server.json" },
  args: {
    tool: { type: "positional", ...VARIADIC, required: true, description: "The tool id to export (several with --format plugin)", valueHint: "tool-id" },
    format: { type: "string", description: "skill (a knowledge tool), plugin (skills and MCP servers) or server.json (an MCP server's package or remote)", valueHint: "format" },
    out: { type: "string", description: "The folder to write into (the export is a new folder or file inside it)", valueHint: "dir" },
    name: { type: "string", description: "The plugin's name, or the server.json registry name (io.github.<owner>/<server>)", valueHint: "name" },
    ...projectFlags,
  },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    if (!args.tool || !args.format || !args.out) throw new KiwiError("E_USAGE", "kiwi export needs a tool, --format and --out", { hint: "kiwi export <tool> --format skill|plugin|server.json --out <dir>" });
    const ids = [String(args.tool), ...((args._ as string[] | undefined) ?? []).filter((a) => a !== args.tool)];
    const result = exportTools(ctx, ids, String(args.format), String(args.out), args.name);
    if (args.json) {
      showJson({ ok: true, ...result });
      return 0;
    }
    for (const note of result.notes) showNote(`note: ${note}`);
    showResult(`exported ${result.tools.join(", ")} as ${result.format} to ${result.path} (${plural(result.files.length, "file")})`);
    return 0;
  },
});
