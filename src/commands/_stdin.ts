// Reading a call's parameters from stdin or a file, shared by `kiwi exec` and its remembered launch.
import { fstatSync, readFileSync } from "node:fs";
import { KiwiError } from "../errors.ts";

/** Stdin is a pipe, file or socket (not a terminal, not /dev/null): it may carry JSON parameters. */
export function stdinCarriesData(): boolean {
  try {
    const st = fstatSync(0);
    return st.isFIFO() || st.isFile() || st.isSocket();
  } catch {
    return false;
  }
}

/** The whole text of a file or descriptor; E_INPUT_INVALID naming `what` when it cannot be read. */
export function readAll(path: string | number, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new KiwiError("E_INPUT_INVALID", `cannot read ${what}: ${code}`, { hint: code === "ENOENT" ? "check the path" : "check that the file is readable" });
  }
}
