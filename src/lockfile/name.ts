// The lockfile's name, on its own: exec's warm path names the file without loading the parser
// (parse.ts brings TypeBox, whose modules cost a warm `kiwi exec` start-up time).

/** The lockfile's name at the project root. */
export const LOCKFILE_NAME = "tool.lock.json";
