// The folders npm and pip work in while kiwi resolves or installs packages: in the system's temp
// folder (so one left behind is never mistaken for cache content), named after the process that
// made it. A run that ends normally removes its own; a killed one (kill -9, Ctrl-C during an
// install) cannot, and an install's folder holds a whole package tree, so the next run removes
// those whose process no longer runs, as .ai/.kiwi-tmp/'s are (cache/projects-io.ts).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeDeadLeftovers } from "../cache/projects-io.ts";
import { removeTree } from "../cache/remove-io.ts";

/** What a staging folder is for: `kiwi-<client>-<step>-<pid>-<random>`. */
export type StagingPrefix = "kiwi-npm-resolve" | "kiwi-npm-install" | "kiwi-pip-resolve" | "kiwi-pip-install";

/** A staging folder's owner, from its name; undefined for any other name. */
const OWNER = /^kiwi-(?:npm|pip)-(?:resolve|install)-(\d+)-/;

/**
 * A new `<prefix>-<pid>-<random>` folder in the temp folder, after removing every staging folder
 * (of any client and step: a later run may need another) of processes that no longer run.
 */
export function makeStagingDir(prefix: StagingPrefix): string {
  const temp = tmpdir();
  removeDeadLeftovers(temp, (name) => {
    const pid = OWNER.exec(name)?.[1];
    return pid === undefined ? undefined : Number(pid);
  }, removeQuietly);
  return mkdtempSync(join(temp, `${prefix}-${process.pid}-`));
}

/** Another user's folder in a shared /tmp cannot be removed: that is theirs to clean. */
function removeQuietly(path: string): void {
  try {
    removeTree(path);
  } catch {
    // left as it is
  }
}
