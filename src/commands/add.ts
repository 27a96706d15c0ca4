// `kiwi add <registry>/<repository>:<tag>|@sha256:<digest>`: pull, verify, validate, place in
// .ai/tools/.remote/<id>/ and lock with its oci:// source.
// `kiwi add --from <file>`: import a tool from a format users already have (formats/), no registry.
import { defineCommand } from "./_define.ts";
import { VARIADIC } from "./_args.ts";
import { KiwiError } from "../errors.ts";
import { importFromFile } from "../ops/import-io.ts";
import { addRemoteTool } from "../ops/registry-add-io.ts";
import { renderImportNotes, renderImported } from "../ui/import-render.ts";
import { showJson, showNote, showResult } from "../ui/output.ts";
import { renderAdded, renderRefetched } from "../ui/registry-render.ts";
import { findingsJson } from "../ui/findings-render.ts";
import { showCheckNotes, showGateFindings } from "./_check-notes.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";
import { insecureList, registryFlags } from "./_registry-flags.ts";

export default defineCommand({
  meta: { name: "add", description: "Add a tool from an OCI registry (verify every digest and the integrity, validate, lock), or import one with --from" },
  args: {
    reference: { type: "positional", ...VARIADIC, required: false, description: "registry/repository:tag or registry/repository@sha256:<digest>", valueHint: "reference" },
    from: { type: "string", description: "Import a tool instead: an MCP registry server.json, an .mcpb bundle, or a skill or Agent Plugin folder", valueHint: "file" },
    id: { type: "string", description: "With --from: the tool id to write (default: from the server's or bundle's name)", valueHint: "tool_id" },
    pick: { type: "string", description: "With --from: which entry of a server.json to import (npm, pypi, mcpb, remote; default: the first kiwi can run)", valueHint: "entry" },
    ...registryFlags,
    ...projectFlags,
  },
  async run({ args, rawArgs }) {
    const ctx = contextFromArgs(args);
    if (args.from !== undefined) {
      if (args.reference) throw new KiwiError("E_USAGE", "kiwi add takes a registry reference or --from <file>, not both", { hint: "kiwi add --from server.json" });
      const result = await importFromFile(ctx, String(args.from), { id: args.id, pick: args.pick });
      if (args.json) {
        showJson({ ok: true, ...result });
        return 0;
      }
      for (const line of renderImportNotes(result)) showNote(line);
      showResult(renderImported(result));
      return 0;
    }
    if (args.id !== undefined || args.pick !== undefined) throw new KiwiError("E_USAGE", "--id and --pick go with --from", { hint: "kiwi add --from server.json --id <tool_id>" });
    if (!args.reference) throw new KiwiError("E_USAGE", "kiwi add needs a reference or --from <file>", { hint: "kiwi add <registry>/<repository>:<tag>, or kiwi add --from server.json" });
    // One reference per call: a second one was dropped unread, and the first reported as if all were added.
    const references = (args._ ?? []).map(String);
    if (references.length > 1) {
      throw new KiwiError("E_USAGE", `kiwi add takes one reference, not ${references.length} (${references.join(", ")}); nothing was added`, { hint: `run kiwi add once per tool: ${references.map((r) => `kiwi add ${r}`).join(" && ")}` });
    }
    const { findings, ...result } = await addRemoteTool(ctx, String(args.reference), { insecure: insecureList(rawArgs, args.insecureRegistry) }).catch((error: unknown) => {
      // The report that stopped the lock step, as kiwi lock shows it (--json: the error's details).
      if (!args.json) showGateFindings(error, ctx);
      throw error;
    });
    if (args.json) {
      showJson({ ok: true, ...result, ...(findings.length ? { findings: findingsJson(findings) } : {}) });
      return 0;
    }
    showCheckNotes(findings, ctx, false);
    for (const e of result.evicted) showNote(renderRefetched(e));
    showResult(renderAdded(result));
    return 0;
  },
});
