// tool.lock.json: build, render, parse (fail closed), diff, the gate and the tree hashes the
// lock/install/verify use cases (ops/) are made of. It must not print (ui/ does) and only fs.ts
// writes the lockfile.
