// The lockfile's name, alone in its module so that code which only needs the name (the staged
// check's memo, the hook's path grouping) does not load the lockfile schema and its checker.

/** The lockfile beside .ai/ in every project. */
export const LOCKFILE_NAME = "tool.lock.json";
