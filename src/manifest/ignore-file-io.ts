// Reads the project's ignore file (IGNORE_FILE) as discovery reads a manifest: bytes, a size cap,
// no NUL, and nothing through a symbolic link. What its entries mean is validate/'s (ignore-file.ts).
// Apart from project-io.ts, which a warm `kiwi exec` loads: exec judges no findings.
import { type Stats, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../integrity/digest.ts";
import { IGNORE_FILE, type IgnoreFileText, utcDay } from "./model.ts";

/** Most bytes the ignore file may hold: a manifest's cap. */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/**
 * The project's ignore file, read as it is: undefined when there is none. Only a regular file is
 * read (a symbolic link's target could change under the memos, which stat the link); a file kiwi
 * cannot take as text says why, and validate/ignore-file.ts reports it. `now` (ms) gives the day its
 * entries' `expires` dates are judged against.
 */
export function readIgnoreFileText(root: string, now: number = Date.now()): IgnoreFileText | undefined {
  const abs = join(root, IGNORE_FILE);
  const day = utcDay(now);
  let st: Stats;
  try {
    st = lstatSync(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    return { unreadable: `cannot be read (${code ?? (error as Error).message})`, stat: [-1, 0, 0, 0], digest: "", day };
  }
  const stat: IgnoreFileText["stat"] = [st.size, st.mtimeMs, st.ctimeMs, st.ino];
  if (st.isSymbolicLink()) return { unreadable: "is a symbolic link: kiwi reads the ignore file only as a regular file", stat, digest: "", day };
  if (!st.isFile()) return { unreadable: "is not a regular file", stat, digest: "", day };
  if (st.size > MAX_IGNORE_FILE_BYTES) return { unreadable: `is ${st.size} bytes: it is capped at ${MAX_IGNORE_FILE_BYTES} bytes`, stat, digest: "", day };
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (error) {
    return { unreadable: `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, stat, digest: "", day };
  }
  const digest = sha256Hex(bytes);
  if (bytes.indexOf(0) !== -1) return { unreadable: "contains NUL bytes: it must be UTF-8 text", stat, digest, day };
  return { text: bytes.toString("utf8"), stat, digest, day };
}
