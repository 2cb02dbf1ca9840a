import { bfclBenchmark } from "./bfcl.ts";

/** BFCL v3 irrelevance (Berkeley Function-Calling Leaderboard, non-live AST category). */
export const bfclIrrelevance = bfclBenchmark("irrelevance", 240);
