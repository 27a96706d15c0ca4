// The raw tree fingerprint: every entry under .ai/tools, by path, with the stat identity (size,
// mtime, ctime, inode, mode) of every file, read with one readdir per folder and one lstat per
// file and nothing else: no manifest is opened, parsed or normalised. It covers a superset of
// what discovery reads (all of .ai/tools), so when it matches the last run that wrote or confirmed
// the lockfile, and the lockfile's bytes do too, `kiwi lock` has nothing to do, which it can then
// say at about the cost of `git status` (git's index answers the same question the same way).
// A tree with a symbolic link gives no fingerprint (a link's own stat says nothing of its target),
// and a file changed within the racy margin makes it unusable, as in the stat cache.
import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { RACY_MARGIN_MS } from "../cache/stat-cache-io.ts";
import { TOOLS_DIR } from "../manifest/project-io.ts";

export interface RawFingerprint {
  digest: string;
  /** Something changed within the racy margin of `startedAt`: compare, but never remember. */
  racy: boolean;
}

/** The fingerprint of `root`'s tool tree and `extra` (kiwi's version, options), or undefined when it cannot vouch for the tree. */
export function rawTreeFingerprint(root: string, extra: unknown, startedAt: number): RawFingerprint | undefined {
  const limit = startedAt - RACY_MARGIN_MS;
  const names: string[] = [JSON.stringify(extra), root];
  const numbers: number[] = [];
  let racy = false;
  const walk = (dir: string, rel: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return false;
    }
    for (const entry of entries) {
      if (entry.isSymbolicLink()) return false;
      // dir is already a clean absolute path: concatenation, not join()'s normalisation (a third of the walk).
      const abs = `${dir}/${entry.name}`;
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        names.push(`${path}/`);
        if (!walk(abs, path)) return false;
        continue;
      }
      let st;
      try {
        st = lstatSync(abs);
      } catch {
        return false;
      }
      if (st.mtimeMs >= limit || st.ctimeMs >= limit) racy = true;
      names.push(path);
      numbers.push(st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode);
    }
    return true;
  };
  if (!walk(join(root, TOOLS_DIR), "")) return undefined;
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(names.join("\0"));
  hasher.update(new Uint8Array(Float64Array.from(numbers).buffer));
  return { digest: hasher.digest("hex"), racy };
}
