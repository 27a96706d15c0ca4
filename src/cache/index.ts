// The content-addressed cache: blobs by sha256, tool index entries by integrity, the stat cache,
// and run-directory materialization. It must not touch tool.lock.json (lockfile/fs.ts owns that).
export { materializeTool, type MaterializeOptions, type MaterializeResult } from "./materialize-io.ts";
export { type Eviction, type Store, type ToolIndexEntry, blobPath, checkBlob, getVerifiedBlobPath, openStore, readToolEntry } from "./store-io.ts";
