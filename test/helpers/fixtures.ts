import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { OptimizeSettings } from "../../src/loop/optimize.ts";

export const ROOT = resolve(import.meta.dirname, "..", "..");
export const INITIAL_HARNESS = join(ROOT, "harnesses", "initial");
export const CIRCLE_PACKING = join(ROOT, "tasks", "circle-packing");
export const GENERATED_HARNESS = join(ROOT, "harnesses", "examples", "generated-code");
/** Rows of GSM8K's train and test files (MIT, licence beside them): copy into a --data-dir as gsm8k/. */
export const GSM8K_FIXTURE = join(ROOT, "test", "fixtures", "datasets", "gsm8k");

export function tempDir(prefix = "hone-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A copy of a package or task folder to break in one place. */
export function copyOf(src: string): string {
  const dir = join(tempDir(), "copy");
  cpSync(src, dir, { recursive: true });
  return dir;
}

export function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

export function edit(file: string, change: (text: string) => string): void {
  writeFileSync(file, change(readFileSync(file, "utf8")));
}

/** A minimal task folder whose evaluator is the given Python body; seed program has one EVOLVE block. */
export function makeTask(evaluatorPy: string, opts: { seed?: string; honeYaml?: string; timeout?: number } = {}): string {
  const dir = tempDir("hone-task-");
  write(
    join(dir, "initial_program.py"),
    opts.seed ?? "# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n\ndef run():\n    return X\n",
  );
  write(join(dir, "evaluator.py"), evaluatorPy);
  write(join(dir, "config.yaml"), `prompt:\n  system_message: a test task\nevaluator:\n  timeout: ${opts.timeout ?? 20}\n`);
  if (opts.honeYaml) write(join(dir, "hone.yaml"), opts.honeYaml);
  return dir;
}

/** optimize() settings on circle packing with the offline model as executor and proposer, the cache off. */
export function offlineOptimizeSettings(o: Partial<OptimizeSettings> = {}): OptimizeSettings {
  return {
    task: "circle-packing",
    seedHarness: INITIAL_HARNESS,
    proposerHarness: join(ROOT, "harnesses", "proposer"),
    executor: { model: "offline" },
    proposer: { model: "offline" },
    rounds: 1,
    proposals: 2,
    maxEvals: 3,
    concurrency: 2,
    paired: false,
    seed: 1,
    warmPool: true,
    cache: { mode: "off" },
    learning: { mode: "context", digestTokens: 2000 },
    ...o,
  };
}
