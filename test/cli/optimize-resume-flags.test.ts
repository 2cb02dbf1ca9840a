import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { refuseResumeMismatch } from "../../src/cli/optimize-flags.ts";
import { storedSettings } from "../../src/loop/optimize.ts";
import { createRunDb } from "../../src/store/db.ts";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";

// --resume keeps the run's own settings: a flag that says otherwise is refused naming it (exit 2), one that agrees
// (or --rounds, --concurrency) passes.
const discovery = offlineOptimizeSettings({ method: "greedy", seed: 3 });
const qa = offlineOptimizeSettings({
  task: undefined,
  benchmark: { id: "gsm8k", train: 4, validation: 2, splitSeed: 0 },
});

describe("refuseResumeMismatch", () => {
  it("passes flags that agree with the stored settings, and the ones that may change", () => {
    expect(() => refuseResumeMismatch({ rounds: 9, concurrency: 1, json: true }, discovery, "run")).not.toThrow();
    // Where rollouts run may change (and a stored queue URL holds no password, so it is given again).
    expect(() => refuseResumeMismatch({ queue: "redis://:pw@127.0.0.1:6390" }, discovery, "run")).not.toThrow();
    expect(() => refuseResumeMismatch({ method: "greedy", seed: 3, task: "circle-packing" }, discovery, "run")).not.toThrow();
    expect(() => refuseResumeMismatch({ benchmark: "gsm8k", train: 4, executor: "offline" }, qa, "run")).not.toThrow();
  });

  it("refuses a flag that differs, naming the flag, its value and the stored one", () => {
    expect(() => refuseResumeMismatch({ method: "gepa" }, discovery, "run")).toThrow(
      /--resume run: --method gepa differs from the run's method \("greedy"\)/,
    );
    expect(() => refuseResumeMismatch({ seed: 4 }, discovery, "run")).toThrow(/--seed 4 differs from the run's seed \(3\)/);
    expect(() => refuseResumeMismatch({ train: 8 }, qa, "run")).toThrow(
      /--train 8 differs from the run's benchmark\.train \(4\)/,
    );
    expect(() => refuseResumeMismatch({ paired: true }, qa, "run")).toThrow(
      /--paired true differs from the run's paired \(false\)/,
    );
  });
});

describe("resuming a run started with a queue URL that had a password", () => {
  const dir = tempDir();
  createRunDb(join(dir, "hone.db"), "optimize", { ...discovery, queue: "redis://:pw@127.0.0.1:6390" });

  it("asks for the URL again (the password was never stored), naming the run", () => {
    expect(() => storedSettings(dir, {})).toThrow(
      new RegExp(`${dir} was started with --queue redis://:\\*\\*\\*@127\\.0\\.0\\.1:6390; hone never stores a password`),
    );
  });

  it("continues with the URL given again", () => {
    expect(storedSettings(dir, { overrides: { queue: "redis://:pw@127.0.0.1:6390" } }).queue).toBe("redis://:pw@127.0.0.1:6390");
  });
});
