// A stat identity as a row of numbers: size, mtimeMs, ctimeMs, ino and mode, in this order. The raw
// walk of the tree (manifest/raw-tree-io.ts), the lock index, statx and the pre-hash worker's
// file order all read and write such rows. Pure.

/** Numbers kept per entry, in this order. */
export const ROW_WIDTH = 5;

/** True for a folder's mode (S_IFDIR). */
export function isFolder(mode: number): boolean {
  return (mode & 0o170000) === 0o040000;
}

/** True for a regular file's mode (S_IFREG). */
export function isRegularFile(mode: number): boolean {
  return (mode & 0o170000) === 0o100000;
}
