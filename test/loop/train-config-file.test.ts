import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readTrainConfig } from "../../src/loop/train-config.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// `hone train --config` given a FIFO blocked in its read for ever (SIGTERM and Ctrl-C unanswered, since the read
// held the thread their handlers run on), a directory was reported as "not valid YAML: EISDIR", and a file of any
// size was read whole before anything was checked.

describe("train.yaml that is not a regular file", () => {
  it("refuses a FIFO at once, naming it, exit 5", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const fifo = join(dir, "train.yaml");
    execFileSync("mkfifo", [fifo]);
    const r = await hone(["train", "--config", fifo, "--out", join(dir, "run")], { timeoutMs: 30_000 });
    expect(r.stderr).toContain(`${fifo}: is not a regular file (a FIFO)`);
    expect(r.code).toBe(5);
  });

  it("refuses a directory naming it as one", () => {
    const dir = join(tempDir(), "train.yaml");
    mkdirSync(dir);
    expect(() => readTrainConfig(dir)).toThrow(`${dir}: is not a regular file (a directory)`);
  });

  it("refuses a file larger than 16 MiB before reading it", () => {
    const file = join(tempDir(), "train.yaml");
    writeFileSync(file, `# ${"x".repeat(16 * 1024 * 1024)}\n`);
    expect(() => readTrainConfig(file)).toThrow(/is larger than 16 MiB/);
  });

  it("still names a missing file", () => {
    const file = join(tempDir(), "absent.yaml");
    expect(() => readTrainConfig(file)).toThrow(`${file}: does not exist`);
  });
});
