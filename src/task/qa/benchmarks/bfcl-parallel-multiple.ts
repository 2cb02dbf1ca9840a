import { bfclBenchmark } from "./bfcl.ts";

/** BFCL v3 parallel_multiple (Berkeley Function-Calling Leaderboard, non-live AST category). */
export const bfclParallelMultiple = bfclBenchmark("parallel_multiple", 200);
