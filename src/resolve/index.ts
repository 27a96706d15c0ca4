// resolve/ owns executor chains: lookup by id, version ranges, cycles and depth, and "did you
// mean" suggestions. It is pure: tools in, chains and findings out; it never reads the disk.
