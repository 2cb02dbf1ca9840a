import { bfclBenchmark } from "./bfcl.ts";

/** BFCL v3 multiple (Berkeley Function-Calling Leaderboard, non-live AST category). */
export const bfclMultiple = bfclBenchmark("multiple", 200);
