import type { BenchmarkDef } from "./benchmark.ts";
import { twoWiki } from "./benchmarks/2wikimultihopqa.ts";
import { aime2024 } from "./benchmarks/aime2024.ts";
import { aime2025 } from "./benchmarks/aime2025.ts";
import { bfclIrrelevance } from "./benchmarks/bfcl-irrelevance.ts";
import { bfclMultiple } from "./benchmarks/bfcl-multiple.ts";
import { bfclParallel } from "./benchmarks/bfcl-parallel.ts";
import { bfclParallelMultiple } from "./benchmarks/bfcl-parallel-multiple.ts";
import { bfclSimple } from "./benchmarks/bfcl-simple.ts";
import { gsm8k } from "./benchmarks/gsm8k.ts";
import { hotpotqa } from "./benchmarks/hotpotqa.ts";
import { math500 } from "./benchmarks/math500.ts";
import { musique } from "./benchmarks/musique.ts";
import { nqOpen } from "./benchmarks/nq-open.ts";
import { strategyqa } from "./benchmarks/strategyqa.ts";
import { triviaqa } from "./benchmarks/triviaqa.ts";

/** Every benchmark hone knows: one file in benchmarks/ and one line here. */
export const REGISTRY: readonly BenchmarkDef[] = [
  gsm8k,
  math500,
  hotpotqa,
  triviaqa,
  nqOpen,
  musique,
  twoWiki,
  strategyqa,
  aime2024,
  aime2025,
  bfclSimple,
  bfclMultiple,
  bfclParallel,
  bfclParallelMultiple,
  bfclIrrelevance,
];
