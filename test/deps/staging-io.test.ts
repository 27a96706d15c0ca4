// The staging folders npm and pip work in: named after the process that made them, and those a
// killed kiwi left behind (kill -9, Ctrl-C) removed by the next run; a live process's are kept.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeStagingDir } from "../../src/deps/staging-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);
const saved = process.env.TMPDIR;
afterEach(() => {
  process.env.TMPDIR = saved;
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

describe("makeStagingDir", () => {
  test("makes <prefix>-<pid>-<random> in the temp folder, after removing every staging folder of a dead process", async () => {
    const temp = makeTemp("kiwi-tmpdir-");
    process.env.TMPDIR = temp;
    const dead = await deadPid();
    const alive = Bun.spawn(["sleep", "30"]);
    try {
      for (const name of [`kiwi-npm-install-${dead}-aaaaaa`, `kiwi-npm-install-${alive.pid}-bbbbbb`, `kiwi-pip-install-${dead}-cccccc`, "kiwi-npm-install-notapid", "other"]) {
        mkdirSync(join(temp, name, "node_modules", "x"), { recursive: true });
        writeFileSync(join(temp, name, "node_modules", "x", "index.js"), "1\n");
      }
      const made = makeStagingDir("kiwi-npm-install");
      expect(made.startsWith(join(temp, `kiwi-npm-install-${process.pid}-`))).toBe(true);
      expect(existsSync(made)).toBe(true);
      expect(readdirSync(temp).sort()).toEqual([`kiwi-npm-install-${alive.pid}-bbbbbb`, "kiwi-npm-install-notapid", made.slice(temp.length + 1), "other"].sort());
    } finally {
      alive.kill();
    }
  });
});
