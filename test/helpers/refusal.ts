import { HoneError } from "../../src/errors.ts";

/** The HoneError that `f` throws (any other error is thrown on; no error at all fails the test). */
export function refusal(f: () => unknown): HoneError {
  try {
    f();
  } catch (err) {
    if (err instanceof HoneError) return err;
    throw err;
  }
  throw new Error("not refused");
}

/** The HoneError that `f` rejects with, as `refusal` does for a function that returns a promise. */
export async function asyncRefusal(f: () => Promise<unknown>): Promise<HoneError> {
  try {
    await f();
  } catch (err) {
    if (err instanceof HoneError) return err;
    throw err;
  }
  throw new Error("not refused");
}
