// commands/ holds one file per verb: parse flags -> one ops/ call -> ui/. Commands are thin: no
// file system walking, hashing or spawning here. The table of commands is COMMANDS in src/cli.ts.
