// Where a resolution's packages came from, as kiwi lock says it (originsOf): one entry per registry or folder.
import { expect, test } from "bun:test";
import { originsOf } from "../../src/deps/resolve-io.ts";

test.each([
  ["registries by origin, once each", ["https://registry.npmjs.org/a/-/a-1.0.0.tgz", "https://registry.npmjs.org/b/-/b-2.0.0.tgz", "http://127.0.0.1:4873/c/-/c-1.0.0.tgz"], ["http://127.0.0.1:4873", "https://registry.npmjs.org"]],
  ["npm's configured registry, for an entry without resolved", [undefined], ["the configured registry"]],
  ["a PIP_FIND_LINKS folder by its path, not as \"null\"", ["file:///srv/wheels/kiwi_words-2.0.0-py3-none-any.whl", "file:///srv/wheels/kiwi_greeting-1.0.0-py3-none-any.whl"], ["file:///srv/wheels/"]],
] as const)("%s", (_what, urls, origins) => {
  expect(originsOf(urls)).toEqual([...origins]);
});
