import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { optimize } from "../../src/loop/optimize.ts";
import { startFakeVllm } from "../helpers/fake-vllm.ts";
import { offlineOptimizeSettings, ROOT, tempDir } from "../helpers/fixtures.ts";

const SCRIPT = join(ROOT, "scripts", "lora_train.py");

function check(file: string, env: Record<string, string> = {}) {
  const args = file ? [SCRIPT, "--check-data", file] : [SCRIPT, "--check-data"];
  const r = spawnSync("python3", args, { encoding: "utf8", env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => close?.());

describe("scripts/lora_train.py --check-data on what hone writes", () => {
  it("accepts the JSONL that lora.ts writes in a real optimize run (the trainer command runs the check)", async () => {
    const vllm = await startFakeVllm("qwen-base");
    close = vllm.close;
    const dir = tempDir();
    // The trainer command checks the round's data, keeps the summary beside it, then writes a stand-in adapter.
    const trainer = `python3 ${SCRIPT} --check-data "$HONE_LORA_DATA" > "$HONE_LORA_DATA.check.json" && mkdir -p "$HONE_LORA_OUTPUT_DIR" && echo '{}' > "$HONE_LORA_OUTPUT_DIR/adapter_config.json"`;
    const out = join(dir, "run");
    await optimize(
      offlineOptimizeSettings({
        proposer: { model: "qwen-base", baseUrl: vllm.url },
        rounds: 1,
        proposals: 3,
        maxEvals: 3,
        concurrency: 3,
        // The fake proposer writes two identical specs; the duplicate is refused, and with the default gate (3 of 3)
        // the round would fail and train nothing. One valid proposal is enough here: the refused slot's own sample
        // is in the data too, charged the minimum.
        methodParams: { proposal_gate: "min1" },
        learning: { mode: "lora", digestTokens: 1000, lora: { trainerCommand: trainer, baseModel: "qwen-base" } },
      }),
      { outDir: out },
    );
    const lora = join(out, "lora");
    expect(readdirSync(lora)).toContain("round-01.jsonl.check.json");
    const summary = JSON.parse(readFileSync(join(lora, "round-01.jsonl.check.json"), "utf8"));
    const rows = readFileSync(join(lora, "round-01.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(summary).toMatchObject({ round: 1, rows: 3 });
    expect(summary.rows).toBe(rows.length);
    expect(summary.trainable).toBe(rows.filter((r) => r.advantage > 0 && r.completion.trim()).length);
    expect(summary.advantage_sum).toBeCloseTo(0, 9);
  });

  it("reads HONE_LORA_DATA when no file is given, and weights positive advantages by advantage / their mean", () => {
    const file = join(tempDir(), "round-02.jsonl");
    const row = (slot: number, advantage: number, completion = '{"system_prompt": "x"}') =>
      JSON.stringify({
        round: 2,
        slot,
        prompt: [
          { role: "system", content: "s" },
          { role: "user", content: "u" },
        ],
        completion,
        advantage,
        reward: advantage,
      });
    writeFileSync(file, `${[row(0, 0.9), row(1, 0.3), row(2, -1.2), row(3, 0.6, "")].join("\n")}\n`);
    const r = check("", { HONE_LORA_DATA: file });
    expect(r.status).toBe(0);
    // Trainable: slots 0 and 1 (slot 3 has no completion); mean positive advantage (0.9 + 0.3)/2 = 0.6 → weights 1.5, 0.5.
    expect(JSON.parse(r.stdout)).toMatchObject({
      round: 2,
      rows: 4,
      trainable: 2,
      not_positive: 1,
      empty_completion: 1,
      weights: [1.5, 0.5],
    });
  });
});

const GOOD = {
  round: 1,
  slot: 0,
  prompt: [
    { role: "system", content: "You write HarnessSpecs." },
    { role: "user", content: "Task: …" },
  ],
  completion: '{"sampling": {"temperature": 0.7}}',
  advantage: 0.4,
  reward: 0.1,
};
const line = (over: Record<string, unknown>, drop: string[] = []) => {
  const o: Record<string, unknown> = { ...GOOD, ...over };
  for (const k of drop) delete o[k];
  return JSON.stringify(o);
};

describe("scripts/lora_train.py --check-data refuses malformed data, naming the line", () => {
  const cases: [string, string[], RegExp][] = [
    ["not JSON", [line({}), "{oops"], /line 2: not valid JSON/],
    ["a missing field", [line({}, ["completion"])], /line 1: missing "completion"/],
    ["a string advantage", [line({}), line({ slot: 1, advantage: "high" })], /line 2: "advantage" must be a finite number/],
    ["NaN", [line({}).replace('"advantage":0.4', '"advantage":NaN')], /line 1: not valid JSON \(NaN is not a finite number\)/],
    ["a boolean round", [line({ round: true })], /line 1: "round" must be an integer >= 1/],
    [
      "two rounds in one file",
      [line({}), line({ slot: 1 }), line({ slot: 2, round: 2 })],
      /line 3: "round" is 2, but line 1 has 1/,
    ],
    ["a repeated slot", [line({}), line({})], /line 2: slot 0 already on line 1/],
    ["an empty prompt", [line({ prompt: [] })], /line 1: "prompt" must be a non-empty list/],
    ["a bad role", [line({ prompt: [{ role: "wizard", content: "x" }] })], /line 1: "prompt"\[0\] must be/],
    ["a non-object line", ["[1, 2]"], /line 1: a line must be a JSON object/],
    ["deep nesting", [`${"[".repeat(100_000)}${"]".repeat(100_000)}`], /line 1: JSON nested too deeply/],
  ];
  it.each(cases)("%s", (_name, lines, message) => {
    const file = join(tempDir(), "round-01.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const r = check(file);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain(file);
  });
  it("an empty file, a missing file, and no file at all", () => {
    const file = join(tempDir(), "empty.jsonl");
    writeFileSync(file, "\n\n");
    expect(check(file)).toMatchObject({ status: 2, stderr: expect.stringMatching(/no rows/) });
    expect(check(join(tempDir(), "absent.jsonl"))).toMatchObject({ status: 2, stderr: expect.stringMatching(/cannot read it/) });
    expect(check("", { HONE_LORA_DATA: "" })).toMatchObject({ status: 2, stderr: expect.stringMatching(/no data file/) });
  });
  const torch = spawnSync("python3", ["-c", "import torch"], { encoding: "utf8" }).status === 0;
  it.skipIf(torch)("training without torch stops with exit 3 and says what to install, after the data check", () => {
    const file = join(tempDir(), "round-01.jsonl");
    writeFileSync(file, `${line({})}\n`);
    const env = {
      ...process.env,
      HONE_LORA_DATA: file,
      HONE_LORA_OUTPUT_DIR: join(tempDir(), "adapter"),
      HONE_LORA_BASE_MODEL: "m",
    };
    const r = spawnSync("python3", [SCRIPT], { encoding: "utf8", env });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/pip install torch transformers peft/);
  });
});
