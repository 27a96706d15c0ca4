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
