// Which remote tools tool.lock.json records that this checkout has not installed: no tool of that
// id in the tree and no .ai/tools/.remote/<id>/ at all (a fresh clone, before kiwi install). A
// folder that is there but no longer holds the tool is the tool gone, as for any other tool. The
// lock keeps such tools (lock-full-io.ts); verify, check, the lock's check and list name them.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REMOTE_TOOLS_DIR } from "../manifest/model.ts";

/** Of `remoteIds` (the lockfile's `remote` section), those not installed in the project at `root`; `present`: the tree's tool ids. */
export function remoteToolsNotInstalled(root: string, remoteIds: Iterable<string>, present: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const id of remoteIds) if (!present.has(id) && !existsSync(join(root, REMOTE_TOOLS_DIR, id))) out.push(id);
  return out;
}
