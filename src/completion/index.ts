// completion/ owns the bash, zsh and fish scripts, generated from the command table and each
// command's flags. It must not keep its own list of commands or flags.
export { renderBash } from "./bash.ts";
export { renderFish } from "./fish.ts";
export { renderZsh } from "./zsh.ts";
export { resolveCompletionTree } from "./command-tree.ts";
