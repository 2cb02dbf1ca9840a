import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_QA_HARNESS, optimize } from "../../src/loop/optimize.ts";
import { startFakeVllm } from "../helpers/fake-vllm.ts";
import { offlineOptimizeSettings, ROOT, tempDir } from "../helpers/fixtures.ts";

// harnessttt on a QA benchmark learns its proposer as on a discovery task: each round's K own samples with their
// advantages in lora/round-NN.jsonl, the trainer run, the adapter loaded and proposing the next round.

let close: (() => Promise<void>) | undefined;
afterEach(async () => close?.());

const benchmark = { id: "gsm8k", train: 4, validation: 2, dataDir: join(ROOT, "test", "fixtures", "datasets"), splitSeed: 0 };

describe("harnessttt on a QA benchmark: rewards, advantages and lora learning (fake vLLM, fake trainer)", () => {
  it("credits every slot, writes the proposer's own completions with their advantages, and proposes with the adapter", async () => {
    const vllm = await startFakeVllm("qwen-base");
    close = vllm.close;
    const dir = tempDir();
    const trainer = join(dir, "train.sh");
    writeFileSync(
      trainer,
      `#!/bin/sh\nset -e\nmkdir -p "$HONE_LORA_OUTPUT_DIR"\necho '{"r": 8}' > "$HONE_LORA_OUTPUT_DIR/adapter_config.json"\n`,
    );
    const out = join(dir, "run");
    await optimize(
      offlineOptimizeSettings({
        task: undefined,
        benchmark,
        seedHarness: DEFAULT_QA_HARNESS,
        proposer: { model: "qwen-base", baseUrl: vllm.url },
        rounds: 2,
        proposals: 2,
        learning: { mode: "lora", digestTokens: 1000, lora: { trainerCommand: `sh ${trainer}`, baseModel: "qwen-base" } },
      }),
      { outDir: out },
    );
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const slots = db
      .prepare("SELECT slot, status, score, reward, advantage FROM candidates WHERE round = 1 ORDER BY slot")
      .all() as { slot: number; status: string; score: number | null; reward: number | null; advantage: number | null }[];
    db.close();
    expect(slots).toHaveLength(2);
    for (const s of slots) {
      expect(s.reward, `slot ${s.slot}`).toEqual(expect.any(Number));
      expect(s.advantage, `slot ${s.slot}`).toEqual(expect.any(Number));
    }
    const group = readFileSync(join(out, "lora", "round-01.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(group.map((g) => g.slot)).toEqual([0, 1]);
    const sent = vllm.requests.map((r) => JSON.stringify(r.messages));
    for (const g of group) {
      // On-policy: the prompt is a request the proposer got, the completion the text it answered.
      expect(sent).toContain(
        JSON.stringify(g.prompt.map((m: { role: string; content: string }) => ({ role: m.role, content: m.content }))),
      );
      expect(typeof g.completion).toBe("string");
      expect(g.advantage).toBe(slots[g.slot]?.advantage);
      expect(g.reward).toBe(slots[g.slot]?.reward);
    }
    expect(group.reduce((a, g) => a + g.advantage, 0)).toBeCloseTo(0, 9);
    expect(existsSync(join(out, "lora", "round-02.jsonl"))).toBe(true);
    expect(vllm.loads.map((l) => l.lora_name)).toEqual(["hone-proposer-r01", "hone-proposer-r02"]);
    expect(vllm.chatModels[0]).toBe("qwen-base");
    expect(vllm.chatModels.at(-1)).toBe("hone-proposer-r01");
  });
});
