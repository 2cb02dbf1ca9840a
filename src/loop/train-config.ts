import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { configError, HoneError } from "../errors.ts";
import { BENCHMARKS, isTestOnly, type LoadableSplit, type Split } from "../task/qa/benchmarks.ts";
import { readConfigFile } from "./config-file.ts";
import { type TrainConfig, trainConfigSchema } from "./train-config-schema.ts";

export { type TrainConfig, trainConfigSchema } from "./train-config-schema.ts";

/**
 * Reads train.yaml. Every relative path in it (harness, panel.data_dir, estimator.patches,
 * estimator.proposer_harness, out) resolves against the file's folder, not the current one.
 */
export function readTrainConfig(file: string): TrainConfig & { base: string } {
  const data = readConfigFile(file, trainConfigSchema);
  if (data.held_out && data.held_out.split === data.panel.split)
    throw configError(
      file,
      "held_out.split",
      `is the panel's split (${data.panel.split}); a held-out evaluation needs a split the panel is not drawn from`,
    );
  if (data.held_out && panelOnTestOfTestOnly(data.panel.benchmark, data.panel.split))
    throw configError(file, "held_out.split", overlapOnTest(data.panel.benchmark, data.held_out.split));
  const base = dirname(resolve(file));
  const path = (p: string | undefined) => (p === undefined ? p : resolve(base, p));
  const e = data.estimator;
  return {
    ...data,
    harness: resolve(base, data.harness),
    panel: { ...data.panel, data_dir: path(data.panel.data_dir) },
    estimator:
      e.kind === "patch_queue"
        ? { ...e, patches: e.patches.map((p, i) => (p.includes("\n") ? p : patchFile(file, i, resolve(base, p)))) }
        : e.kind === "llm"
          ? { ...e, proposer_harness: path(e.proposer_harness) }
          : e,
    out: path(data.out),
    base,
  };
}

/** A patch file is read whole into the run's records: far above any diff a person or an agent writes. */
const MAX_PATCH_BYTES = 16 * 1024 * 1024;

/** `path`, the patch file of estimator.patches[i] in `file`, when it is a regular file hone can read whole. */
function patchFile(file: string, i: number, path: string): string {
  let why: string | undefined;
  try {
    const s = statSync(path);
    if (!s.isFile()) why = "is not a regular file";
    else if (s.size > MAX_PATCH_BYTES) why = `is larger than ${MAX_PATCH_BYTES / 1024 / 1024} MiB`;
  } catch (err) {
    why = `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  if (why) throw configError(file, `estimator.patches.${i}`, `${path} ${why}`);
  return path;
}

const panelOnTestOfTestOnly = (id: string, panelSplit: Split) => {
  const b = BENCHMARKS[id];
  return panelSplit === "test" && b !== undefined && isTestOnly(b);
};

const overlapOnTest = (id: string, heldSplit: Split) =>
  `is ${heldSplit}, which ${id} (published with a test file only) draws from its test file, so it overlaps the panel on test; put panel.split on train or validation and held_out.split on test`;

/**
 * The split a held-out evaluation loads. A test-only benchmark (MATH-500, HumanEval, HotpotQA…) draws its train and
 * validation from its test file's search pool, so its held-out `test` is the test file without that pool
 * (`test-heldout`, as `hone compare` measures) and no panel question is in it; a panel on its `test` has no split
 * held out from it (refused).
 */
export function heldOutSplitOf(id: string, panelSplit: Split, heldSplit: Split): LoadableSplit {
  if (panelOnTestOfTestOnly(id, panelSplit)) throw new HoneError("usage", `held_out.split ${overlapOnTest(id, heldSplit)}`);
  const b = BENCHMARKS[id];
  return heldSplit === "test" && b !== undefined && isTestOnly(b) ? "test-heldout" : heldSplit;
}
