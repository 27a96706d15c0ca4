// Which parameter names say they carry a secret (a warning when one reaches a command line).
import { describe, expect, test } from "bun:test";
import { isSecretParam } from "../../src/schema/placeholders.ts";

describe("isSecretParam", () => {
  test.each(["token", "github_token", "accessToken", "api_key", "apiKey", "API-KEY", "apikey", "private_key", "client_secret", "db_password", "passwd", "passphrase", "aws.credentials"])("%p names a secret", (name) => {
    expect(isSecretParam(name)).toBe(true);
  });

  test.each(["max_tokens", "token_count", "tokenizer", "password_file", "secret_name", "sort_key", "key", "passwordless", "tokens", "keyword", ""])("%p does not", (name) => {
    expect(isSecretParam(name)).toBe(false);
  });
});
