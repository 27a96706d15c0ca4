// Reads the text a `kiwi hash` subcommand works on: a file, or stdin for `-` or no argument.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { KiwiError } from "../errors.ts";

/** The input text and a name for it in messages. */
export async function readInputText(arg: string | undefined, cwd: string): Promise<{ text: string; subject: string }> {
  if (arg === undefined || arg === "-") return { text: await Bun.stdin.text(), subject: "<stdin>" };
  try {
    return { text: readFileSync(resolve(cwd, arg), "utf8"), subject: arg };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "EIO";
    throw new KiwiError("E_INPUT_INVALID", `cannot read ${arg}: ${code}`, { hint: code === "ENOENT" ? "check the path, or pass - to read stdin" : "check the file's permissions" });
  }
}
