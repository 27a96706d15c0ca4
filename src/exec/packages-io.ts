// A chain link's npm packages at exec time: the lock's installed tree, read from the cache and
// checked against the digest tool.lock.json records, merged into the link's run directory (where
// node resolves node_modules beside the tool's files); an mcp_server's `config.package` becomes
// `node <its bin>` from that copy. Nothing is downloaded here: a missing tree is "run kiwi install".
import { type Store, readTreeEntry } from "../cache/store-io.ts";
import { serverBin } from "../deps/npm-lock.ts";
import { declaredPackages, npmDependencies } from "../deps/requirements.ts";
import { KiwiError } from "../errors.ts";
import type { FileEntry } from "../integrity/tool.ts";
import type { Tool } from "../manifest/model.ts";
import type { VerifiedLink } from "./chain-verify-io.ts";

export interface LinkPackages {
  /** The tool as it runs: an mcp_server package started as `node <bin>` from the run directory. */
  tool: Tool;
  /** The installed files, under node_modules/. */
  files: FileEntry[];
  treeHex: string;
}

/** The verified installed packages of `link`; throws E_DEPS / E_CACHE_MISSING with what to run. */
export function linkPackages(store: Store, link: Pick<VerifiedLink, "tool" | "packages">): LinkPackages {
  const { tool, packages } = link;
  const declared = declaredPackages(tool);
  const wanted = npmDependencies(declared)?.dependencies;
  if (!packages || JSON.stringify(packages.requires) !== JSON.stringify(wanted ?? {})) {
    throw new KiwiError("E_DEPS", `${tool.id} needs npm packages that tool.lock.json does not hold${wanted ? ` (${Object.entries(wanted).map(([n, r]) => `${n}@${r}`).join(", ")})` : ""}`, {
      hint: 'run "kiwi install": it resolves, installs and records them (kiwi never downloads at exec time)',
      details: { tool: tool.id },
    });
  }
  if (!packages.tree) {
    throw new KiwiError("E_DEPS", `${tool.id}'s npm packages are locked but not installed`, { hint: 'run "kiwi install"', details: { tool: tool.id } });
  }
  const treeHex = packages.tree.slice("sha256:".length);
  const files = readTreeEntry(store, treeHex);
  if (!files) {
    throw new KiwiError("E_CACHE_MISSING", `${tool.id}'s installed npm packages (tree sha256:${treeHex.slice(0, 12)}) are not in the cache`, { hint: 'run "kiwi install" to install them again', details: { tool: tool.id } });
  }
  const clash = tool.files.find((f) => f.path === "node_modules" || f.path.startsWith("node_modules/"));
  if (clash) {
    throw new KiwiError("E_DEPS", `${tool.id} has its own ${clash.path}, where its installed npm packages go`, { hint: "remove the tool's node_modules folder: kiwi installs the declared packages", details: { tool: tool.id } });
  }
  if (!declared.server) return { tool, files, treeHex };
  const bin = serverBin(packages, declared.server.requirement.name, declared.server.bin);
  if ("problem" in bin) throw new KiwiError("E_DEPS", `${tool.id}: config.package: ${bin.problem}`, { hint: "name the bin with config.bin", details: { tool: tool.id } });
  return { tool: { ...tool, entrypoint: bin.path, config: { ...tool.config, command: "node" } }, files, treeHex };
}
