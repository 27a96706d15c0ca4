// What a tool needs besides its own files: the packages it declares (requirements.ts), npm's
// resolution of them as kiwi locks it (npm-lock.ts), and the real npm client that resolves and
// installs them (npm-io.ts, resolve-io.ts, install-io.ts). Sits between the tool model and the
// lock: manifests -> requirements -> locked packages -> installed, verified tree -> run directory.
export { type DeclaredPackages, type Requirement, type ServerPackage, declaredPackages, npmDependencies, parseRequirement } from "./requirements.ts";
export { npmTreeDigest, npmTreeText, packageLockOf, parsePackageLock, serverBin } from "./npm-lock.ts";
