// The context's terminal test decides colour and prompts: a pipe, a file and /dev/null are not
// terminals, a pseudo-terminal is, whichever way the answer is reached (device number or isatty).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { isCI, linuxMajor } from "../src/context.ts";
import { needsTerminal } from "./helpers/needs.ts";

const PRINT = `import { createContext } from ${JSON.stringify(join(import.meta.dir, "../src/context.ts"))}; process.stdout.write(String(createContext({ env: {} }).interactive));`;

function interactiveWith(stderr: "pipe" | "devnull" | "pty"): string {
  const bun = process.execPath;
  const argv =
    stderr === "pty"
      ? ["script", "-q", "-e", "-c", `${bun} -e '${PRINT}'`, "/dev/null"]
      : ["bash", "-c", `exec ${bun} -e '${PRINT}' 2>${stderr === "devnull" ? "/dev/null" : "&1"}`];
  const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  return r.stdout.toString().trim();
}

describe("createContext().interactive", () => {
  test("stderr to a pipe is not a terminal", () => {
    expect(interactiveWith("pipe")).toBe("false");
  });
  test("stderr to /dev/null (a character device) is not a terminal", () => {
    expect(interactiveWith("devnull")).toBe("false");
  });
  test.skipIf(!needsTerminal())("stderr to a pseudo-terminal is one", () => {
    expect(interactiveWith("pty")).toBe("true");
  });
});

describe("linuxMajor", () => {
  test("reads glibc's encoding of a device number", () => {
    expect(linuxMajor((1 << 8) | 3)).toBe(1); // /dev/null
    expect(linuxMajor((136 << 8) | 7)).toBe(136); // /dev/pts/7
    expect(linuxMajor((143 << 8) | 255 | (4096 << 12))).toBe(143); // a high minor
    expect(linuxMajor(((0x1234 & 0xfff) << 8) + (0x1234 & ~0xfff) * 2 ** 32)).toBe(0x1234); // a major past 12 bits
  });
});

describe("isCI", () => {
  test("any value CI systems set is CI, as npm, pnpm and yarn read it; unset, empty, false and 0 are not", () => {
    for (const value of ["true", "1", "TRUE", "woodpecker", "yes"]) expect([value, isCI(value)]).toEqual([value, true]);
    for (const value of [undefined, "", "false", "False", "0"]) expect([value, isCI(value)]).toEqual([value, false]);
  });
});
