import { bfclBenchmark } from "./bfcl.ts";

/** BFCL v3 parallel (Berkeley Function-Calling Leaderboard, non-live AST category). */
export const bfclParallel = bfclBenchmark("parallel", 200);
