// The one error shape of every import: the file and the field (a JSON pointer) named, with a hint.
// Pure.
import { KiwiError } from "../errors.ts";
import { escapePointer } from "../integrity/canonical.ts";

/** A coded refusal of a file given to `kiwi add --from`: names the file and the field. */
export function importError(file: string, pointer: string, message: string, hint: string): KiwiError {
  const at = pointer === "" ? file : `${file} at ${pointer}`;
  return new KiwiError("E_INPUT_INVALID", `${at}: ${message}`, { hint, details: { file, field: pointer } });
}

/** A JSON pointer with one more segment (RFC 6901 escaping). */
export function child(pointer: string, key: string | number): string {
  return `${pointer}/${escapePointer(String(key))}`;
}

/**
 * Text for the one comment line an import writes above a manifest: a line break in a file name, a
 * URL or a certificate's subject would end the comment and put the rest into the manifest as YAML.
 */
export function commentText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
