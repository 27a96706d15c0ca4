// Text from HTTP bodies in the charset their Content-Type declares. Pure.

/** The `charset` parameter of a Content-Type, if any (`application/json; charset="iso-8859-1"`). */
export function charsetOf(contentType: string | null | undefined): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "")?.[1];
}

/**
 * `body` as text in the charset `label` names (`iso-8859-1` reads `é` from one byte, as a browser
 * does); UTF-8 when there is none or TextDecoder does not know the label. Bytes the charset cannot
 * decode become U+FFFD.
 */
export function decodeCharset(body: Uint8Array, label: string | undefined): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder((label ?? "utf-8") as ConstructorParameters<typeof TextDecoder>[0]);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.decode(body);
}
