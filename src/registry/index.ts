// OCI registries: references, the kiwi tool artifact layout, the distribution client (auth,
// digests, size caps) over its transport (TLS, redirects, retries, proxies: transport-io.ts),
// pulling and placing a verified artifact. The use cases over them (publish, add, outdated,
// update, install's remote step) are in ops/. It must not write tool.lock.json itself
// (lockfile/fs.ts does) nor decide trust (trust/ does).
