// What a call threw, for tests that assert on a KiwiError's code, message and hint.
import { KiwiError } from "../../src/errors.ts";

/** The KiwiError `fn` throws; fails the test when it returns or throws anything else. */
export function thrownBy(fn: () => unknown): KiwiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof KiwiError) return error;
    throw error;
  }
  throw new Error("expected a KiwiError, but nothing was thrown");
}

/** The KiwiError a promise rejects with. */
export async function rejectionOf(promise: Promise<unknown>): Promise<KiwiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof KiwiError) return error;
    throw error;
  }
  throw new Error("expected a KiwiError, but the promise resolved");
}
