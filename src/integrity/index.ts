// integrity/ owns canonical JSON (the value model, the lossless parser and the renderer), every
// digest kiwi computes (tool integrity, sha256 notation) and what a tool's file set is (ignored
// names, the tool-path rule). It is pure: it takes values, text and bytes and never opens a path,
// and nothing else may feed a digest.
