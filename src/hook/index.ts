// hook/ owns kiwi's place in a commit: the pre-commit hook script, git's view of the staged tree
// and the pure judgement of what a commit changes. The use cases over them (`kiwi hook`,
// `kiwi check --staged`) are ops/hook-install-io.ts and ops/staged-io.ts. Git is asked, never edited.
