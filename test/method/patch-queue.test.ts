import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PatchQueue } from "../../src/method/estimators.ts";
import { tempDir } from "../helpers/fixtures.ts";

// train.yaml's patch_queue applies the user's diffs to a candidate's folder. The run's folder is often inside the
// user's own git work tree (runs/ in a project), where `git apply` would read the patch's paths against that tree's
// top and skip every one outside the folder, silently: the epoch was then "the change is empty".
describe("PatchQueue", () => {
  const patch = "diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -1 +1 @@\n-old\n+new\n";
  const context = (candidateDir: string) => ({ epoch: 1, incumbentDir: candidateDir, candidateDir, panelDescription: "" });

  for (const where of ["a plain folder", "a folder inside a git work tree"])
    it(`applies its patch to the candidate's files in ${where}`, async () => {
      const project = tempDir();
      if (where !== "a plain folder") execFileSync("git", ["init", "-q", project]);
      const candidate = join(project, "runs", "train-x", "candidates", "epoch-01");
      mkdirSync(candidate, { recursive: true });
      writeFileSync(join(candidate, "prompt.md"), "old\n");
      expect(await new PatchQueue([patch]).propose(context(candidate))).toBe("patch 1 of 1");
      expect(readFileSync(join(candidate, "prompt.md"), "utf8")).toBe("new\n");
    });
});
