import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { contentHash } from "../../src/harness/files.ts";
import { executeQAJobData, WorkerCaches } from "../../src/loop/distributed/execute.ts";
import { currentHoneBuild, type QAJobData } from "../../src/loop/distributed/job-data.ts";
import { CIRCLE_PACKING, copyOf } from "../helpers/fixtures.ts";

// A worker refuses a job whose task content differs from its own copy. The user then brings the worker's copy up to
// date (git pull, rsync) and the next job must be measured: the refusal is a fact about the folder as it was, not a
// value to keep for the worker's life (it went on refusing, naming the folder's old hash).

let caches: WorkerCaches | undefined;
afterEach(async () => {
  await caches?.close();
  caches = undefined;
});

describe("a worker's refusal of a task whose content differs", () => {
  it("is asked again at the next job, so a copy brought up to date is measured", { timeout: 60_000 }, async () => {
    const coordinators = contentHash(CIRCLE_PACKING);
    const dir = copyOf(CIRCLE_PACKING);
    const evaluator = join(dir, "evaluator.py");
    const original = readFileSync(evaluator, "utf8");
    appendFileSync(evaluator, "\n# an older copy\n");
    caches = new WorkerCaches(1);
    const ref = { ref: dir, contentHash: coordinators };
    const first = await caches.task(ref, "worker w");
    expect("refused" in first && first.refused).toMatch(/refusing to measure a different task/);
    writeFileSync(evaluator, original); // brought up to date
    const second = await caches.task(ref, "worker w");
    expect("refused" in second ? second.refused : "measured").toBe("measured");
  });
});

describe("a QA job made by another hone", () => {
  it("is refused before anything runs, naming what differs", async () => {
    caches = new WorkerCaches(1);
    const ours = currentHoneBuild();
    const job = {
      kind: "qa",
      runKey: "k",
      jobId: "j",
      harness: { digest: "0".repeat(64) },
      benchmark: "gsm8k",
      task: { id: "t", question: "1+1?", answer: "2" },
      seed: 0,
      executor: { model: "offline" },
      hone: { version: ours.version, runtime: "f".repeat(64) },
    } as unknown as QAJobData;
    await expect(executeQAJobData(job, caches, "worker w")).rejects.toThrow(
      `worker w: this hone differs from the coordinator's (evaluation runtime (src/task/python) ${ours.runtime.slice(0, 12)} here, ffffffffffff on the coordinator)`,
    );
  });
});
