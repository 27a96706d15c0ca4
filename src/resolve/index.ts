// resolve/ owns executor chains: lookup by id, version ranges, cycles and depth, and "did you
// mean" suggestions. It is pure: tools in, chains and findings out; it never reads the disk.
export { MAX_CHAIN_DEPTH, indexTools, renderCycle, resolveChain } from "./chain.ts";
export { editDistance, suggest } from "./suggest.ts";
