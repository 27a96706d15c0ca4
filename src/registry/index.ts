// OCI registries: references, the kiwi tool artifact layout, the distribution client (auth, TLS,
// digests, size caps), pulling and placing a verified artifact. The use cases over them (publish,
// add, outdated, update, install's remote step) are in ops/. It must not write tool.lock.json
// itself (lockfile/fs.ts does) nor decide trust (trust/ does).
export { RegistryClient, readCapped, referrersTag } from "./oci-client-io.ts";
export { ANNOTATIONS, MEDIA, buildArtifact, checkToolConfig, parseToolManifest } from "./artifact-layout.ts";
export { type PullOptions, pullArtifact } from "./fetch-io.ts";
export { REMOTE_DIR, placeTool } from "./place-io.ts";
export { type OciReference, formatReference, isLoopbackHost, ociSource, parseReference } from "./reference.ts";
