// pip's failures as kiwi reports them (pipError), from pip's own stderr.
import { describe, expect, test } from "bun:test";
import { pipError, recordWithoutScripts } from "../../src/deps/pip-io.ts";

const UNHASHED = `ERROR: Hashes are required in --require-hashes mode, but they are missing from some requirements. Here is a list of those requirements along with the hashes their downloaded archives actually had. Add lines like these to your requirements files to prevent tampering. (If you did not enable --require-hashes manually, note that it turns on automatically when any package has a hash.)
    dep-a==1.0 --hash=sha256:dc2515de7059eadbab53f195ba4fed14ce36e100ba1dc1b20461fd1d8e972fb4
`;
const MISMATCH = `ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have tampered with them.
    kiwi-greeting==1.0.0 from http://127.0.0.1:1/files/kiwi_greeting-1.0.0-py3-none-any.whl#sha256=2326 (from -r r.txt (line 1)):
        Expected sha256 0000
             Got        2326
`;
const requires = ["kiwi-greeting==1.0.0     --hash=sha256:2326", "dep-a==1.0"];

describe("pipError", () => {
  test("a requirement without --hash beside one with: names it and says why pip wants one", () => {
    const e = pipError("t", UNHASHED, 1, requires, { wheelsOnly: true, resolving: true });
    expect([e.code, e.message]).toEqual(["E_DEPS", "t: dep-a==1.0 has no --hash, which pip requires of every distribution once one requirement has a --hash"]);
    expect(e.hint).toContain("pip-compile --generate-hashes");
  });

  test("a hash mismatch at lock blames the index or the --hash (there is no lock yet); at install, the lock", () => {
    const resolving = pipError("t", MISMATCH, 1, requires, { wheelsOnly: true, resolving: true });
    expect([resolving.code, resolving.message]).toEqual(["E_INTEGRITY_MISMATCH", "t: cannot get kiwi-greeting==1.0.0: a distribution does not match the sha256 its index lists or its --hash names (the index served other bytes, or the --hash is wrong)"]);
    expect(resolving.hint).toContain("nothing was locked");
    const installing = pipError("t", MISMATCH, 1, requires, { wheelsOnly: false, resolving: false });
    expect(installing.message).toBe("t: cannot get kiwi-greeting==1.0.0: a distribution does not match the sha256 in the lock (the index served other bytes)");
  });

  test.each([
    ["a dependency no version of which matches, naming who requires it", "ERROR: Could not find a version that satisfies the requirement old-dist>=5 (from needs-newer) (from versions: 1.0)\nERROR: No matching distribution found for old-dist>=5\n", ["other>=1", "needs-newer==1.0"], "t: cannot get needs-newer==1.0: no version of its dependency old-dist>=5 (which needs-newer requires) matches"],
    ["the requirement itself", "ERROR: Could not find a version that satisfies the requirement kiwi-greeting==9.0.0 (from versions: 1.0.0)\nERROR: No matching distribution found for kiwi-greeting==9.0.0\n", ["kiwi-greeting==9.0.0"], "t: cannot get kiwi-greeting==9.0.0: no version of kiwi-greeting==9.0.0 matches"],
    ["the requirement, spelt otherwise than pip spells it", "ERROR: No matching distribution found for Kiwi_Greeting>=9\n", ["Kiwi_Greeting>=9"], "t: cannot get Kiwi_Greeting>=9: no version of Kiwi_Greeting>=9 matches"],
  ])("%s", (_what, stderr, requires, message) => {
    const e = pipError("t", stderr, 1, requires, { wheelsOnly: true, resolving: true });
    expect([e.code, e.message]).toEqual(["E_DEPS", message]);
  });
});

const DOWN = `WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/kiwi-words/
ERROR: Could not find a version that satisfies the requirement kiwi-words>=2 (from versions: none)
ERROR: No matching distribution found for kiwi-words>=2
`;
const PIN_MISSING = `ERROR: Could not find a version that satisfies the requirement foo-bar==1.0.0 (from versions: none)
ERROR: No matching distribution found for foo-bar==1.0.0
`;

describe("pipError: an index that is down, or lacks what the lock pins", () => {
  test("pip says no version matches when it reached no index: the index is named, not the requirement", () => {
    for (const resolving of [true, false]) {
      const e = pipError("t", DOWN, 1, ["kiwi-words>=2"], { wheelsOnly: true, resolving });
      expect([e.code, e.message]).toEqual(["E_DEPS", "t: cannot get kiwi-words>=2: the index cannot be reached"]);
      expect(e.hint).toContain("check the index (PIP_INDEX_URL) and the network");
    }
  });

  test("at install, a pin the index does not have is named as the lock pins it, and the index is to be checked, not the manifest", () => {
    const e = pipError("t", PIN_MISSING, 1, ["kiwi-words>=2", "Foo_Bar"], { wheelsOnly: false, resolving: false });
    expect([e.code, e.message]).toEqual(["E_DEPS", "t: cannot get foo-bar==1.0.0, which tool.lock.json pins: the index does not have it"]);
    expect(e.hint).toContain("it must serve every distribution the lock pins");
  });
});

describe("recordWithoutScripts", () => {
  test("drops the lines of the scripts pip wrote into bin/ (their sha256 covers a shebang naming the staging venv), keeps every other", () => {
    const record = [
      "../../bin/kiwi-cli,sha256=abc,246",
      '"../../bin/odd,name",sha256=def,10',
      "../../share/kiwi/data.txt,sha256=ghi,12",
      "kiwi_cli/__init__.py,sha256=jkl,40",
      "kiwi_cli/bin/helper.py,sha256=mno,5",
      "kiwi_cli-1.0.0.dist-info/RECORD,,",
      "",
    ].join("\n");
    expect(recordWithoutScripts(record)).toBe(["../../share/kiwi/data.txt,sha256=ghi,12", "kiwi_cli/__init__.py,sha256=jkl,40", "kiwi_cli/bin/helper.py,sha256=mno,5", "kiwi_cli-1.0.0.dist-info/RECORD,,", ""].join("\n"));
  });
});
