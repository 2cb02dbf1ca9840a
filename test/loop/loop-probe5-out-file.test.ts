import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { runHarness } from "../../src/loop/run.ts";
import { CIRCLE_PACKING, INITIAL_HARNESS, tempDir } from "../helpers/fixtures.ts";

describe("hone run --out naming a file", () => {
  it("is refused as a file, not as a folder that is not empty (as hone optimize says it)", async () => {
    const file = join(tempDir(), "notes.txt");
    writeFileSync(file, "mine\n");
    const err = await runHarness(INITIAL_HARNESS, CIRCLE_PACKING, { model: "offline", maxEvals: 1, outDir: file }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HoneError);
    expect((err as HoneError).exit).toBe("usage");
    expect((err as Error).message).toBe(`${file} is a file, not a folder; choose another --out`);
  });
});
