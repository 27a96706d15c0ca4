// The content-addressed cache: blobs by sha256, tool index entries by integrity, the stat cache,
// and run-directory materialization. It must not touch tool.lock.json (lockfile/fs.ts owns that).
