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
