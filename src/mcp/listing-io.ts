// Reads a wire listing file (shared/specs/mcp-interface.md §3) from disk for offline hashing,
// scanning and diffing. Parsing is the pure listing.ts.
import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { KiwiError } from "../errors.ts";
import { type WireListing, parseWireListing } from "./listing.ts";

/** Largest listing file read (the same bound as one live message). */
const MAX_LISTING_FILE_BYTES = 64 * 1024 * 1024;

/** Reads and parses a listing file; `file` is relative to `cwd` (or absolute). */
export function readWireListing(cwd: string, file: string): { listing: WireListing; source: string } {
  const abs = resolve(cwd, file);
  const source = relative(cwd, abs) || file;
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new KiwiError("E_INPUT_INVALID", `cannot read the listing file ${source}: ${code ?? (error as Error).message}`, {
      hint: code === "ENOENT" ? "check the path given to --listing" : "check the file's permissions",
    });
  }
  if (bytes.length > MAX_LISTING_FILE_BYTES) {
    throw new KiwiError("E_INPUT_INVALID", `the listing file ${source} is larger than 64 MiB`, { hint: "a real MCP interface is far smaller; check the file" });
  }
  return { listing: parseWireListing(new TextDecoder().decode(bytes), source), source };
}
