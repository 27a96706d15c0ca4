// The content-addressed cache: blobs by sha256, tool index entries by integrity, the stat cache,
// and run-directory materialization; with the file-system helpers the tree's readers share (atomic
// writes, self-verifying memo files, stat rows and statx, hashing on a second core). It must not
// touch tool.lock.json (lockfile/fs.ts owns that).
