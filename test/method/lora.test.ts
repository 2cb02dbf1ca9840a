import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { validateSpec } from "../../src/harness/spec.ts";
import { optimize } from "../../src/loop/optimize.ts";
import { extractProposals } from "../../src/method/proposer.ts";
import { startFakeVllm } from "../helpers/fake-vllm.ts";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";
import { eventually, running } from "../helpers/processes.ts";

let close: (() => Promise<void>) | undefined;
afterEach(async () => close?.());

/** A fake vLLM and a fake trainer that logs what it was given (`echo` fields) and writes an adapter. */
async function lab(echo: string, rounds: number) {
  const vllm = await startFakeVllm("qwen-base");
  close = vllm.close;
  const dir = tempDir();
  const trainer = join(dir, "train.sh");
  const seen = join(dir, "trainer-saw.txt");
  writeFileSync(
    trainer,
    `#!/bin/sh\nset -e\necho "${echo}" >> ${seen}\nmkdir "$HONE_LORA_OUTPUT_DIR"\necho '{"r": 8}' > "$HONE_LORA_OUTPUT_DIR/adapter_config.json"\n`,
  );
  const settings = offlineOptimizeSettings({
    proposer: { model: "qwen-base", baseUrl: vllm.url },
    rounds,
    proposals: 3,
    maxEvals: 4,
    concurrency: 3,
    learning: { mode: "lora", digestTokens: 1000, lora: { trainerCommand: `sh ${trainer}`, baseModel: "qwen-base" } },
  });
  return { vllm, seen, settings, out: join(dir, "run") };
}

describe("lora proposer learning (fake vLLM, fake trainer)", () => {
  it("writes each round's group, runs the trainer, loads the adapter and proposes with it next round", async () => {
    const echo = '$HONE_LORA_ROUND $HONE_LORA_BASE_MODEL $(wc -l < "$HONE_LORA_DATA") prev=$HONE_LORA_PREVIOUS_ADAPTER';
    const { vllm, seen, settings, out } = await lab(echo, 2);
    const result = await optimize(settings, { outDir: out });
    expect(result.bestScore).not.toBeNull();
    const group = readFileSync(join(out, "lora", "round-01.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(group).toHaveLength(3);
    for (const g of group) {
      expect(g).toHaveProperty("advantage");
      expect(g.prompt[0].role).toBe("system");
      expect(typeof g.completion).toBe("string");
    }
    expect(group.reduce((a, g) => a + g.advantage, 0)).toBeCloseTo(0, 9);
    // On-policy: each row is one slot's own sample, exactly as sent and answered: its prompt is a request the
    // proposer got, its completion the raw text the slot's recorded spec was read from (not a re-serialised spec).
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const specs = db.prepare("SELECT slot, spec, status FROM candidates WHERE round = 1 ORDER BY slot").all() as {
      slot: number;
      spec: string;
      status: string;
    }[];
    db.close();
    const sent = vllm.requests.map((r) => JSON.stringify(r.messages));
    for (const g of group) {
      expect(sent).toContain(
        JSON.stringify(g.prompt.map((m: { role: string; content: string }) => ({ role: m.role, content: m.content }))),
      );
      const own = specs.find((c) => c.slot === g.slot);
      const parsed = extractProposals(g.completion);
      expect(Array.isArray(parsed), g.completion).toBe(true);
      if (own?.status === "valid") expect(validateSpec((parsed as unknown[])[0]).spec).toEqual(JSON.parse(own.spec));
      expect(g.completion).not.toBe(own?.spec);
    }
    expect(readFileSync(seen, "utf8").trim().split("\n")).toEqual([
      "1 qwen-base 3 prev=",
      `2 qwen-base 3 prev=${join(out, "lora", "hone-proposer-r01")}`,
    ]);
    expect(vllm.loads.map((l) => l.lora_name)).toEqual(["hone-proposer-r01", "hone-proposer-r02"]);
    expect(existsSync(vllm.loads[0]?.lora_path as string)).toBe(true);
    // Round 1 proposed with the base model, round 2 with the adapter trained on round 1.
    expect(vllm.chatModels[0]).toBe("qwen-base");
    expect(vllm.chatModels.at(-1)).toBe("hone-proposer-r01");
  });

  it("a run killed after a round ended, before its adapter was written, trains that adapter again on resume", async () => {
    const { vllm, seen, settings, out } = await lab(
      "$HONE_LORA_ROUND prev=$HONE_LORA_PREVIOUS_ADAPTER out=$HONE_LORA_OUTPUT_DIR",
      1,
    );
    await optimize(settings, { outDir: out });
    // As a kill during the trainer leaves it: round 1 finished, its adapter half written beside, none in place.
    const adapter = join(out, "lora", "hone-proposer-r01");
    rmSync(adapter, { recursive: true });
    mkdirSync(`${adapter}.partial-1`);
    writeFileSync(join(`${adapter}.partial-1`, "half.bin"), "x");
    const before = vllm.chatModels.length;
    await optimize(settings, { outDir: out, resume: true, overrides: { rounds: 2 } });
    expect(readFileSync(seen, "utf8").trim().split("\n")).toEqual([
      `1 prev= out=${adapter}.partial-${process.pid}`,
      `1 prev= out=${adapter}.partial-${process.pid}`,
      `2 prev=${adapter} out=${join(out, "lora", "hone-proposer-r02")}.partial-${process.pid}`,
    ]);
    expect(readdirSync(join(out, "lora")).sort()).toEqual([
      "hone-proposer-r01",
      "hone-proposer-r02",
      "round-01.jsonl",
      "round-02.jsonl",
    ]);
    // Round 2 proposed with the adapter trained (again) on round 1.
    expect(vllm.chatModels.slice(before).every((m) => m === "hone-proposer-r01")).toBe(true);
    expect(vllm.chatModels.length).toBeGreaterThan(before);
  });

  it("stops with a clear error when the trainer fails", async () => {
    const vllm = await startFakeVllm("qwen-base");
    close = vllm.close;
    await expect(
      optimize(
        offlineOptimizeSettings({
          proposer: { model: "qwen-base", baseUrl: vllm.url },
          learning: { mode: "lora", digestTokens: 1000, lora: { trainerCommand: "echo out of GPU memory >&2; exit 3" } },
        }),
        { outDir: join(tempDir(), "run") },
      ),
    ).rejects.toThrow(/LoRA trainer command failed in round 1 \(exit 3\): out of GPU memory/);
  });

  it("kills a trainer past its timeout with every process it started, and says so", async () => {
    const vllm = await startFakeVllm("qwen-base");
    close = vllm.close;
    const dir = tempDir();
    const pidFile = join(dir, "helper.pid");
    // A trainer that starts a helper of its own (as a launcher does its workers), then runs on.
    const trainerCommand = `sleep 60 & echo $! > ${pidFile}; sleep 60`;
    const started = performance.now();
    await expect(
      optimize(
        offlineOptimizeSettings({
          proposer: { model: "qwen-base", baseUrl: vllm.url },
          learning: { mode: "lora", digestTokens: 1000, lora: { trainerCommand, timeoutSec: 1 } },
        }),
        { outDir: join(dir, "run") },
      ),
    ).rejects.toThrow(/LoRA trainer command ran past its timeout \(learning\.lora\.timeout: 1 s\) in round 1; it was killed/);
    expect(performance.now() - started).toBeLessThan(30_000);
    const helper = Number(readFileSync(pidFile, "utf8"));
    expect(await eventually(() => !running(helper), 5000)).toBe(true);
  });
});
