// What a tool needs besides its own files. Sits between the tool model and the lock:
// manifests -> declared requirements (requirements.ts, pure) -> resolved by the real npm and pip
// clients at `kiwi lock` (resolve-io.ts, npm-io.ts, pip-io.ts; npm's package-lock kept as
// npm-lock.ts reads it) -> installed into kiwi's cache at `kiwi install` (the use case
// ops/dependency-install-io.ts over installed-tree-io.ts; the tree's digest from installed-tree.ts)
// -> linked beside the run directory by exec/packages-io.ts. npm and pip work in staging folders
// (staging-io.ts) that a killed run leaves for the next one to remove. Nothing here runs at
// `kiwi exec` time but the pure parts.
