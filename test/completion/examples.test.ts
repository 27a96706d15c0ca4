// The examples appended to --help name real commands and real flags, and every command has some.
import { describe, expect, test } from "bun:test";
import { root } from "../../src/cli.ts";
import { EXAMPLES } from "../../src/commands/_examples.ts";
import { type CompletionNode, flattenTree, resolveCompletionTree } from "../../src/completion/command-tree.ts";

const tree = await resolveCompletionTree(root);
const nodes = new Map(flattenTree(tree).map((n) => [n.path.join(" "), n]));

/** The kiwi words of an example line: from "kiwi" up to a shell operator. */
function kiwiWords(line: string): string[] {
  const words = line.split(/\s+/);
  const start = words.indexOf("kiwi") === -1 ? words.findIndex((w) => w.endsWith("(kiwi")) : words.indexOf("kiwi");
  const out: string[] = [];
  for (const word of words.slice(start + 1)) {
    if ([">", "|", "<", ";", "&&"].includes(word)) break;
    out.push(word.replace(/\)$/, ""));
  }
  return out;
}

function accepts(node: CompletionNode, word: string): boolean {
  const name = word.replace(/^-{1,2}/, "").split("=")[0]!;
  return node.flags.some((f) => {
    const camel = f.name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    return [f.name, camel, ...f.long, ...f.short, ...(f.takesValue ? [] : [`no-${f.name}`])].includes(name);
  });
}

describe("the examples in --help", () => {
  test("every command and subcommand has at least one", () => {
    const missing = [...nodes.keys()].filter((path) => !EXAMPLES[path]?.length);
    expect(missing).toEqual([]);
  });

  test.each(Object.entries(EXAMPLES).flatMap(([key, list]) => list.map(([, line]) => [key, line] as const)))("%s: %s names a real command and real flags", (key, line) => {
    const words = kiwiWords(line);
    let node = tree;
    let i = 0;
    for (let next = node.children.find((c) => c.path.at(-1) === words[i]); next; next = node.children.find((c) => c.path.at(-1) === words[i])) {
      node = next;
      i++;
    }
    expect(node.path.join(" ").startsWith(key)).toBe(true);
    const unknown = words.slice(i).filter((w) => w.startsWith("-") && w !== "-" && !accepts(node, w));
    expect(unknown).toEqual([]);
  });

  test("no example is filed under a command that does not exist", () => {
    expect(Object.keys(EXAMPLES).filter((key) => !nodes.has(key))).toEqual([]);
  });
});
