import type { DiscoveryTask } from "../../src/task/discovery-task.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";

/** Runs `use` on a warm pool of one evaluator for `t`, closing it after. */
export async function withPool<T>(t: DiscoveryTask, use: (pool: EvaluatorPool) => Promise<T>): Promise<T> {
  const pool = await EvaluatorPool.start(t, { size: 1 });
  try {
    return await use(pool);
  } finally {
    pool.close();
  }
}
