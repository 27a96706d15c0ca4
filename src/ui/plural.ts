// Counts said as words: "1 file", "2 files". Pure.

/** "1 blob", "2 blobs". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
