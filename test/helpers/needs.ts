// What a test needs from the machine (a program, root, a mount namespace). When it is missing the
// test is skipped, and the reason is written where scripts/test.ts reads it, so the suite's last
// line counts skips with their reasons instead of hiding them.
import { appendFileSync } from "node:fs";

/** True when the prerequisite is present; otherwise records `reason` (once per call) and returns false. */
export function needs(present: boolean, reason: string): boolean {
  const file = process.env.KIWI_TEST_SKIPS;
  if (!present && file) appendFileSync(file, `${reason}\n`);
  return present;
}

/**
 * For the terminal tests: script(1) gives kiwi a pseudo-terminal. CI installs it, so there
 * (`CI=true`) its absence is a failure (the test runs and fails to spawn it), not a skip.
 */
export function needsTerminal(): boolean {
  return needs(Bun.which("script") !== null || process.env.CI === "true", "script(1) (bsdutils) is not installed");
}
