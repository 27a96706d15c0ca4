// validate/ owns the layered rules behind `kiwi check` (universal, per type, security, chain,
// child_schemas, parameters) and returns findings; it must not read disk, spawn or print.
