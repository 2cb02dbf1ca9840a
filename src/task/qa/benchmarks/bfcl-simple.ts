import { bfclBenchmark } from "./bfcl.ts";

/** BFCL v3 simple (Berkeley Function-Calling Leaderboard, non-live AST category). */
export const bfclSimple = bfclBenchmark("simple", 400);
