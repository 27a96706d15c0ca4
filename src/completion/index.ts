// completion/ owns the bash, zsh and fish scripts, generated from the command table and each
// command's flags. It must not keep its own list of commands or flags.
