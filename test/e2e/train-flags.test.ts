import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";

// `--epochs abc` or `-1` measured the seed alone and ended with exit 0, as if training had run.
describe("hone train --epochs", () => {
  for (const epochs of ["abc", "-1", "1.5"])
    it(`refuses ${epochs} with exit 2 before anything is set up`, async () => {
      const r = await hone(["train", "--config", "nowhere/train.yaml", "--epochs", epochs]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--epochs takes a whole number of epochs in all, at least 0/);
    });
});
