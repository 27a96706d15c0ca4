// Reading a call's parameters from stdin or a file, shared by `kiwi exec` and its remembered launch.
import { fstatSync, readFileSync } from "node:fs";
import { KiwiError } from "../errors.ts";
import type { ParamSources } from "../exec/params.ts";

/** The parameter flags of `kiwi exec` as given: `--params` and `--params-file` ('-' is stdin for either), and every `--param`. */
export interface ParamFlags {
  params?: string;
  paramsFile?: string;
  pairs: string[];
}

/**
 * The sources the flags give, with what they name read: `--params -` or `--params-file -` reads
 * stdin as the JSON source, unless `--params` gives the JSON itself; `--params-file` reads its file.
 * The CLI and the remembered launch both read them here, so a call's parameters never depend on
 * which of the two ran it.
 */
export function readFlagSources(flags: ParamFlags): ParamSources {
  const given = flags.params !== undefined && flags.params !== "-" ? flags.params : undefined;
  // The flag that asks for stdin, unless --params gives the JSON itself; a message names both.
  const stdinFlag = given !== undefined ? undefined : flags.params === "-" ? "--params -" : flags.paramsFile === "-" ? "--params-file -" : undefined;
  const json = given !== undefined ? { json: given } : stdinFlag ? { json: readAll(0, "stdin"), jsonFrom: `the JSON on stdin (${stdinFlag})` } : {};
  const file = flags.paramsFile !== undefined && flags.paramsFile !== "-" ? { path: flags.paramsFile, text: readAll(flags.paramsFile, `--params-file ${flags.paramsFile}`) } : undefined;
  return { ...json, ...(file ? { file } : {}), pairs: flags.pairs };
}

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
