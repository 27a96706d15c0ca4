// Small helpers shared by the shell renderers: quoting and the words a flag is typed as. Pure.
import type { CompletionFlag } from "./command-tree.ts";

/** A word that is safe to paste into any shell's word list unquoted. */
export function isSafeWord(word: string): boolean {
  return /^[A-Za-z0-9@%+,./:=_-]+$/.test(word) && !word.startsWith("-");
}

/** POSIX single quoting (bash and zsh). */
export function quoteSingle(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Every way the flag can be typed: `--name`, `--alias`, `-a`. */
export function flagWords(flag: CompletionFlag): string[] {
  return [`--${flag.name}`, ...flag.long.map((l) => `--${l}`), ...flag.short.map((s) => `-${s}`)];
}

/** One line of a description: the first sentence-ish line, no newlines. */
export function oneLine(text: string): string {
  return text.split("\n")[0]!.trim();
}
