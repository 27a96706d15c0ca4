// hook/ owns kiwi's place in a commit: the git pre-commit hook it installs, and `kiwi check
// --staged` (what a commit changes, and whether its lockfile is current). Git is asked, never edited.
export { installHook, uninstallHook } from "./hook-install-io.ts";
