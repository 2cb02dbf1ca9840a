import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_QA_HARNESS, optimize } from "../../src/loop/optimize.ts";
import { replayRun } from "../../src/loop/replay.ts";
import { startFakeVllm } from "../helpers/fake-vllm.ts";
import { offlineOptimizeSettings, ROOT, tempDir } from "../helpers/fixtures.ts";

// `hone replay` contacts no endpoint and re-runs nothing the records hold: a run that learned LoRA adapters replays
// from its records with the proposer's server gone and its trainer failing, and runs no trainer. A discovery task's
// rounds (optimize-rounds.ts) and a QA benchmark's (qa-rounds.ts) each learn on their own path.

const benchmark = { id: "gsm8k", train: 4, validation: 2, dataDir: join(ROOT, "test", "fixtures", "datasets"), splitSeed: 0 };

const kinds = {
  discovery: { proposals: 3, maxEvals: 4, concurrency: 3 },
  qa: { task: undefined, benchmark, seedHarness: DEFAULT_QA_HARNESS, proposals: 2 },
};

describe("hone replay of a run with lora learning (fake vLLM, fake trainer)", () => {
  for (const [kind, extra] of Object.entries(kinds))
    it(`${kind}: matches with the vLLM server stopped, and runs no trainer`, async () => {
      const vllm = await startFakeVllm("qwen-base");
      const dir = tempDir();
      const trainer = join(dir, "train.sh");
      const ran = join(dir, "trainer-ran");
      writeFileSync(
        trainer,
        `#!/bin/sh\nset -e\necho x >> "${ran}"\nmkdir -p "$HONE_LORA_OUTPUT_DIR"\necho '{"r": 8}' > "$HONE_LORA_OUTPUT_DIR/adapter_config.json"\n`,
      );
      const out = join(dir, "run");
      try {
        await optimize(
          offlineOptimizeSettings({
            ...extra,
            proposer: { model: "qwen-base", baseUrl: vllm.url },
            rounds: 2,
            learning: { mode: "lora", digestTokens: 1000, lora: { trainerCommand: `sh ${trainer}`, baseModel: "qwen-base" } },
          }),
          { outDir: out },
        );
      } finally {
        await vllm.close();
      }
      expect(vllm.loads.map((l) => l.lora_name)).toEqual(["hone-proposer-r01", "hone-proposer-r02"]);
      expect(readFileSync(ran, "utf8")).toBe("x\nx\n");
      writeFileSync(ran, "");
      const r = await replayRun(out, join(dir, "replay"));
      expect(r.differences).toEqual([]);
      expect(readFileSync(ran, "utf8")).toBe("");
      // The rounds' training data is written as the run wrote it.
      for (const f of ["round-01.jsonl", "round-02.jsonl"])
        expect(readFileSync(join(dir, "replay", "lora", f), "utf8")).toBe(readFileSync(join(out, "lora", f), "utf8"));
    });

  // `--cache replay` on a new run only serves its model calls from the shared cache: the run is new, so it learns
  // its adapters (trainer and vLLM) as any run does; only `hone replay` of a recorded run skips training.
  for (const [kind, extra] of Object.entries(kinds))
    it(`${kind}: a new run with --cache replay still trains its adapters`, async () => {
      const vllm = await startFakeVllm("qwen-base");
      const dir = tempDir();
      const trainer = join(dir, "train.sh");
      const ran = join(dir, "trainer-ran");
      writeFileSync(
        trainer,
        `#!/bin/sh\nset -e\necho x >> "${ran}"\nmkdir -p "$HONE_LORA_OUTPUT_DIR"\necho '{"r": 8}' > "$HONE_LORA_OUTPUT_DIR/adapter_config.json"\n`,
      );
      const cacheDir = join(dir, "cache");
      const settings = (mode: "read-write" | "replay") =>
        offlineOptimizeSettings({
          ...extra,
          proposer: { model: "qwen-base", baseUrl: vllm.url },
          rounds: 2,
          cache: { mode, dir: cacheDir },
          learning: { mode: "lora", digestTokens: 1000, lora: { trainerCommand: `sh ${trainer}`, baseModel: "qwen-base" } },
        });
      try {
        await optimize(settings("read-write"), { outDir: join(dir, "first") });
        writeFileSync(ran, "");
        const loads = vllm.loads.length;
        await optimize(settings("replay"), { outDir: join(dir, "second") });
        expect(readFileSync(ran, "utf8")).toBe("x\nx\n");
        expect(vllm.loads.slice(loads).map((l) => l.lora_name)).toEqual(["hone-proposer-r01", "hone-proposer-r02"]);
      } finally {
        await vllm.close();
      }
    });
});
