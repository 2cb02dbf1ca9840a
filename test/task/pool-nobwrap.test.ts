// The warm pool where bubblewrap is not available (HONE_NO_BWRAP=1, read once per process): an evaluation runs in a
// process group of its own, not a namespace, and the pool waits for that group's end before the next evaluation.
process.env.HONE_NO_BWRAP = "1";

import { describe, expect, it } from "vitest";
import { isolationSupport } from "../../src/task/python-env.ts";
import { leftoverCases } from "../helpers/pool-leftovers.ts";

describe("warm evaluator pool without bubblewrap", () => {
  it("is really the fallback", () => expect(isolationSupport().bwrap).toBe(false));

  leftoverCases();
});
