// Reading an HTTP response body with a byte cap, for every client kiwi has (http_client tools,
// OCI registries): a declared Content-Length over the cap is refused unread, a stream that passes
// it is cancelled at once, so a hostile server cannot make kiwi buffer more than the cap.

/** The whole body, or `tooBig()` thrown as soon as it passes `cap` bytes. */
export async function readBodyCapped(res: Response, cap: number, tooBig: () => Error): Promise<Uint8Array> {
  const declared = Number(res.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > cap) {
    await res.body?.cancel().catch(() => {});
    throw tooBig();
  }
  if (!res.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => {});
      throw tooBig();
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}
