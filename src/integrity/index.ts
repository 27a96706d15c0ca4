// integrity/ owns canonical JSON (the value model, the lossless parser and the renderer) and every
// digest kiwi computes (tool integrity, sha256 notation). It is pure: it takes values, text and
// bytes, never paths, and nothing else may feed a digest.
