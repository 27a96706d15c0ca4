// integrity/ owns canonical JSON (the value model, the lossless parser and the renderer) and every
// digest kiwi computes (tool integrity, sha256 notation). It is pure: it takes values, text and
// bytes, never paths, and nothing else may feed a digest.
export { compareCodePoints, renderCanonicalJson, renderFloat, renderString } from "./canonical.ts";
export { JsonSyntaxError, parseJsonLossless } from "./json-lossless.ts";
export { formatDigest, hashCanonical, parseDigest, sha256Hex, shortDigest } from "./digest.ts";
export { type FileEntry, type IntegrityInput, hashToolIntegrity, sortFileEntries } from "./tool.ts";
export { type CanonicalValue, Float, toPlain } from "./value.ts";
