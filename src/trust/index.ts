// Trust: ed25519 keys, signatures over tool artifact digests, and .ai/trust.yaml's policy.
// It must not touch the network or the lockfile: registry/ fetches signatures and records verdicts.
