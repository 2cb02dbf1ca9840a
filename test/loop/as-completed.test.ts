import { describe, expect, it } from "vitest";
import { asCompleted, runPool } from "../../src/loop/runner.ts";

const settleIn = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("results as they finish", () => {
  it("yields every value once, in the order the promises settle, however many settle at once", async () => {
    const already = Promise.resolve("now");
    const got = await collect(asCompleted([settleIn(30, "slow"), settleIn(5, "fast"), already, settleIn(15, "middle"), already]));
    expect(got).toEqual(["now", "now", "fast", "middle", "slow"]);
  });

  it("throws a rejection where it falls among the settlements, after the values before it", async () => {
    const got: string[] = [];
    const failing = settleIn(10, "x").then(() => Promise.reject(new Error("the queue job failed")));
    await expect(
      (async () => {
        for await (const x of asCompleted([settleIn(1, "first"), failing, settleIn(40, "late")])) got.push(x);
      })(),
    ).rejects.toThrow("the queue job failed");
    expect(got).toEqual(["first"]);
  });

  it("ends at once for no promises, and keeps up with thousands without waiting on each other", async () => {
    expect(await collect(asCompleted([]))).toEqual([]);
    const n = 5000;
    const values = await collect(asCompleted(Array.from({ length: n }, (_, i) => settleIn(i % 7, i))));
    expect(values).toHaveLength(n);
    expect(new Set(values).size).toBe(n);
  });

  it("the local pool runs at most `concurrency` jobs at once and yields each as it finishes", async () => {
    let running = 0;
    let most = 0;
    const jobs = Array.from({ length: 12 }, (_, i) => ({ id: `j${i}`, ms: (i * 7) % 5 }));
    const done = await collect(
      runPool(jobs, 3, async (j) => {
        most = Math.max(most, ++running);
        await settleIn(j.ms, undefined);
        running--;
        return { id: j.id };
      }),
    );
    expect(most).toBe(3);
    expect(done.map((d) => d.id).sort()).toEqual(jobs.map((j) => j.id).sort());
  });
});
