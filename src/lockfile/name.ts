// The lockfile's name, on its own: code that only names the file (exec's warm path, the staged
// check's memo, the hook's path grouping) does not load the parser, TypeBox and the schema.

/** The lockfile's name at the project root. */
export const LOCKFILE_NAME = "tool.lock.json";
