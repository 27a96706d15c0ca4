// `kiwi key generate <file>`: an ed25519 key pair for signing published tools.
import { defineCommand } from "./_define.ts";
import { resolve } from "node:path";
import { KiwiError } from "../errors.ts";
import { generateKeyPair } from "../ops/key-generate-io.ts";
import { showJson, showResult } from "../ui/output.ts";
import { contextFromArgs, projectFlags } from "./_flags.ts";

const generate = defineCommand({
  meta: { name: "generate", description: "Write an ed25519 private key to <file> (mode 0600) and its public key to <file>.pub" },
  args: { file: { type: "positional", required: true, description: "Private key file to create", valueHint: "file" }, ...projectFlags },
  async run({ args }) {
    const ctx = contextFromArgs(args);
    if (!args.file) throw new KiwiError("E_USAGE", "kiwi key generate needs a file name", { hint: "kiwi key generate ~/.config/kiwi/release.key" });
    const result = generateKeyPair(resolve(ctx.cwd, String(args.file)));
    if (args.json) showJson({ ok: true, private_key: result.privatePath, public_key: result.publicPath, key_id: result.keyId });
    else showResult(`wrote ${result.privatePath} (keep it secret) and ${result.publicPath}\nkey id ${result.keyId}`);
    return 0;
  },
});

export default defineCommand({
  meta: { name: "key", description: "Manage ed25519 signing keys" },
  subCommands: { generate },
});
