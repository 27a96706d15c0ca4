// init/ owns what `kiwi init` writes: the example tools as data, the plan (never overwrite) and
// writing it. It must not validate or lock; the use case (ops/init-io.ts) locks a new tree.
