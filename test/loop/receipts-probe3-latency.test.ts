import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runReceipt } from "../../src/loop/receipt.ts";
import { createRunDb, finishRun, openDb } from "../../src/store/db.ts";
import { tempDir } from "../helpers/fixtures.ts";

// Before: the receipt's p50 was the element at floor(n/2) of the sorted live latencies, the larger of the middle two
// for an even count: a run whose proposer made two calls of 19 ms and 66 ms read "p50 66 ms, p95 66 ms", which no
// one recomputing a median from hone.db finds. Now numpy.percentile's default (linear between the nearest two).
function runWith(latencies: number[], cached: number[] = []): string {
  const dir = tempDir();
  createRunDb(join(dir, "hone.db"), "run", { task: "t", model: "offline", maxEvals: 1 });
  const db = openDb(join(dir, "hone.db"));
  const add = db.prepare(
    "INSERT INTO model_calls (run_id, role, latency_ms, prompt_tokens, completion_tokens, attempts, cached) VALUES ('run', 'executor', ?, 1, 1, 1, ?)",
  );
  for (const l of latencies) add.run(l, 0);
  for (const l of cached) add.run(l, 1);
  finishRun(db, {});
  db.close();
  return dir;
}

describe("a receipt's latency percentiles", () => {
  it("are the median and the 95th percentile of the live calls as numpy.percentile gives them", () => {
    const two = runReceipt(runWith([66, 19])).models[0];
    expect(two?.latency_ms_p50).toBe(42.5);
    expect(two?.latency_ms_p95).toBeCloseTo(63.65, 9);
    // np.percentile(range(1, 17), [50, 95]) = [8.5, 15.25]; cached calls (latency 0) are left out.
    const sixteen = runReceipt(
      runWith(
        Array.from({ length: 16 }, (_, i) => 16 - i),
        [0, 0, 0],
      ),
    ).models[0];
    expect(sixteen?.latency_ms_p50).toBe(8.5);
    expect(sixteen?.latency_ms_p95).toBeCloseTo(15.25, 9);
    expect(sixteen?.calls).toBe(19);
    expect(sixteen?.cache_hits).toBe(3);
    const one = runReceipt(runWith([7])).models[0];
    expect([one?.latency_ms_p50, one?.latency_ms_p95]).toEqual([7, 7]);
    expect(runReceipt(runWith([], [0])).models[0]?.latency_ms_p50).toBeNull();
  });
});
