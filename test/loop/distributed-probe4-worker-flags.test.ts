import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";

// `hone worker --lock-duration-ms` out of range was BullMQ's own refusal, thrown while the worker's connections were
// already opening: an internal error (exit 1) with a stack, and a process that then never exited. It is a usage error
// now, said before anything connects (no Redis needed: nothing listens on the URL's port).

describe("hone worker --lock-duration-ms", () => {
  for (const value of ["0", "-5", "abc", "999.5"])
    it(`refuses ${value} as a usage error, and exits`, async () => {
      const r = await hone(["worker", "--queue", "redis://127.0.0.1:1", "--lock-duration-ms", value], { timeoutMs: 30_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--lock-duration-ms takes a whole number of milliseconds, at least 1000/);
      expect(r.stderr).not.toMatch(/internal error|stalledInterval|at new Worker/);
    }, 40_000);
});
