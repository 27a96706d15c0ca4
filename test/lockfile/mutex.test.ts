// The lockfile lock across real processes: exclusive, freed at once when its owner dies (kill -9),
// and a clear error naming the owner when a live process keeps it.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { acquireFileLock } from "../../src/lockfile/mutex-io.ts";
import { cleanupTemps, makeTemp } from "../helpers/tree.ts";

afterAll(cleanupTemps);

const HOLDER = join(import.meta.dir, "fixtures", "lock-holder.ts");

function spawnHolder(lock: string, log: string, mode: "work" | "hold", id: string) {
  return Bun.spawn([process.execPath, HOLDER, lock, log, mode, id], { stdout: "pipe", stderr: "pipe" });
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.trim();
}

describe("the lockfile lock", () => {
  test("four processes at once never hold it together", async () => {
    const dir = makeTemp();
    const lock = join(dir, "tool.lock.json.lock");
    const log = join(dir, "log");
    writeFileSync(log, "");
    const procs = ["a", "b", "c", "d"].map((id) => spawnHolder(lock, log, "work", id));
    expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0, 0, 0]);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(4 * 22);
    for (let i = 0; i < lines.length; i += 22) {
      const id = lines[i]!.split(" ")[1];
      expect(lines.slice(i, i + 22)).toEqual([`start ${id}`, ...Array(20).fill(`work ${id}`), `end ${id}`]);
    }
    expect(existsSync(lock)).toBe(false);
  });

  test("a lock left by a process that no longer exists is taken over at once", async () => {
    const dir = makeTemp();
    const lock = join(dir, "tool.lock.json.lock");
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(lock, JSON.stringify({ pid: dead, host: hostname(), nonce: "old" }));
    const held = await acquireFileLock(lock, { subject: "tool.lock.json", timeoutMs: 0 });
    expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(process.pid);
    held.release();
    expect(existsSync(lock)).toBe(false);
  });

  test("a live holder makes a waiter fail with its pid; after kill -9 the lock is free", async () => {
    const dir = makeTemp();
    const lock = join(dir, "tool.lock.json.lock");
    const holder = spawnHolder(lock, join(dir, "log"), "hold", "h");
    expect(await firstLine(holder.stdout)).toBe("locked");
    let error: any;
    try {
      await acquireFileLock(lock, { subject: "tool.lock.json", timeoutMs: 100, pollMs: 10 });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "E_IO", message: expect.stringContaining(`kiwi process ${holder.pid}`), hint: expect.stringContaining(lock) });
    holder.kill("SIGKILL");
    await holder.exited;
    const held = await acquireFileLock(lock, { subject: "tool.lock.json", timeoutMs: 0 });
    held.release();
  });

  test("a waiter is told once who holds the lock, then takes it once the holder is killed", async () => {
    const dir = makeTemp();
    const lock = join(dir, "tool.lock.json.lock");
    const holder = spawnHolder(lock, join(dir, "log"), "hold", "h");
    expect(await firstLine(holder.stdout)).toBe("locked");
    const told: string[][] = [];
    const waiting = acquireFileLock(lock, { subject: "tool.lock.json", pollMs: 10, onWait: (who, path) => told.push([who, path]) });
    await Bun.sleep(100);
    expect(told).toEqual([[`kiwi process ${holder.pid} on ${hostname()}`, lock]]);
    holder.kill("SIGKILL");
    await holder.exited;
    (await waiting).release();
    expect(told.length).toBe(1);
  });

  test("a free lock is taken without a word", async () => {
    const told: string[] = [];
    const held = await acquireFileLock(join(makeTemp(), "x.lock"), { subject: "x", onWait: (who) => told.push(who) });
    held.release();
    expect(told).toEqual([]);
  });

  test("release never removes a lock another process took over", async () => {
    const dir = makeTemp();
    const lock = join(dir, "tool.lock.json.lock");
    const held = await acquireFileLock(lock, { subject: "x" });
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), nonce: "someone-else" }));
    held.release();
    expect(existsSync(lock)).toBe(true);
  });
});
