// `hone optimize`'s flags as options of the one schema (loop/optimize-config.ts): each flag sets the config key of
// the same name (--max-evals ↔ max_evals ↔ maxEvals), over the --config file's values, and the merged options are
// validated once, so a bad flag is refused as a bad key is, with the flag named (`--rounds abc` is exit 2).
import { resolve } from "node:path";
import { HoneError } from "../errors.ts";
import type { OptimizeSettings } from "../loop/optimize.ts";
import {
  configOfInput,
  fromModel,
  type OptimizeConfig,
  type OptimizeConfigInput,
  parseOptimizeConfig,
} from "../loop/optimize-config.ts";
import { recordedMethodRef } from "../method/method-ref.ts";
import { recordedTaskRef } from "../task/builtin.ts";
import { modelSettingsFrom } from "./model-options.ts";
import { slurmFromFlags } from "./runner-options.ts";

export { numberish } from "./numberish.ts";

/** Each plain flag (commander's camelCase name) and the config key it sets. */
const PLAIN: Record<string, string> = {
  task: "task",
  seedHarness: "seed_harness",
  proposerHarness: "proposer_harness",
  rounds: "rounds",
  proposals: "proposals",
  maxEvals: "max_evals",
  concurrency: "concurrency",
  noiseRepeats: "noise_repeats",
  seed: "seed",
  tasksDir: "tasks_dir",
  queue: "queue",
  out: "out",
};

/** Config keys set by flags of another spelling (the flag's own name is the first key's). */
const SPECIAL: [flag: string, key: string][] = [
  ["--method", "method"],
  ["--param", "method_params"],
  ["--paired", "paired"],
  ["--cold", "warm_pool"],
  ["--learning", "learning.mode"],
  ["--cache", "cache.mode"],
  ["--cache-dir", "cache.dir"],
  ["--runner", "slurm"],
  ["--benchmark", "benchmark"],
  ["--train", "benchmark.train"],
  ["--validation", "benchmark.validation"],
  ["--data-dir", "benchmark.data_dir"],
];

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** `--param key=value` pairs: numbers and booleans as such, the rest as text; the method's schema checks them. */
export function parseParams(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const i = p.indexOf("=");
    if (i <= 0) throw new HoneError("usage", `--param ${p}: write key=value`);
    const v = p.slice(i + 1);
    out[p.slice(0, i)] = v === "true" ? true : v === "false" ? false : v !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return out;
}

/** The options the flags set, in the config file's shape (only what was given). */
function flagOptions(opts: Record<string, unknown>, base: OptimizeConfigInput): OptimizeConfigInput {
  const out: Record<string, unknown> = {};
  for (const [flag, key] of Object.entries(PLAIN)) if (opts[flag] !== undefined) out[key] = opts[flag];
  // Folders given as flags resolve against the current folder, as the run records them (a resume compares them).
  for (const key of ["seed_harness", "proposer_harness", "tasks_dir"])
    if (typeof out[key] === "string") out[key] = resolve(out[key] as string);
  if (typeof out.task === "string") out.task = recordedTaskRef(out.task);
  if (typeof opts.method === "string") out.method = recordedMethodRef(opts.method);
  if (opts.param) out.method_params = { ...(base.method_params ?? {}), ...parseParams(opts.param as string[]) };
  const bench = { id: opts.benchmark, train: opts.train, validation: opts.validation, data_dir: opts.dataDir };
  if (Object.values(bench).some((v) => v !== undefined)) {
    const given = defined({ ...bench, data_dir: typeof opts.dataDir === "string" ? resolve(opts.dataDir) : undefined });
    if (!base.benchmark && opts.benchmark === undefined)
      throw new HoneError("usage", "--train, --validation and --data-dir are for a QA benchmark: give --benchmark <id>");
    out.benchmark = { ...(base.benchmark ?? {}), ...given };
  }
  if (opts.paired) out.paired = true;
  if (opts.cold) out.warm_pool = false;
  if (opts.learning !== undefined) out.learning = { ...(base.learning ?? {}), mode: opts.learning };
  if (opts.cache !== undefined || opts.cacheDir !== undefined)
    out.cache = defined({
      ...(base.cache ?? {}),
      mode: opts.cache ?? base.cache?.mode,
      dir: typeof opts.cacheDir === "string" ? resolve(opts.cacheDir) : base.cache?.dir,
    });
  const slurm = slurmFromFlags(opts, base.slurm !== undefined);
  // The flags over the config's section: a flag not given keeps the config's value.
  if (slurm)
    out.slurm = {
      ...(base.slurm ?? {}),
      ...defined({ partition: slurm.partition, gres: slurm.gres, time_minutes: slurm.timeMinutes, template: slurm.template }),
    };
  for (const role of ["executor", "proposer"] as const) {
    const given = defined(fromModel(modelSettingsFrom(opts, role)));
    if (Object.keys(given).length) out[role] = { ...(base[role] ?? { model: "offline" }), ...given };
  }
  return out as OptimizeConfigInput;
}

/** The flag that set a config field, if one did (the field's first key decides). */
function flagOf(field: string, opts: Record<string, unknown>): string | undefined {
  const top = field.split(".")[0] ?? field;
  const plain = Object.entries(PLAIN).find(([flag, key]) => key === top && opts[flag] !== undefined)?.[0];
  if (plain) return `--${kebab(plain)} ${String(opts[plain])}`;
  const special = SPECIAL.find(
    ([flag, key]) =>
      (key === field || key === top) && opts[flag.slice(2).replace(/-(.)/g, (_, c: string) => c.toUpperCase())] !== undefined,
  );
  if (special) return special[0];
  if (top === "executor" || top === "proposer") return `--${top}-${kebab(field.split(".")[1] ?? "model").replace(/_/g, "-")}`;
  return undefined;
}

/**
 * The run's options: the config file's (already checked, `file` names it), the flags over them, validated by the
 * one schema with its defaults; a bad value is refused naming the flag (or the file and key) it came from.
 */
export function optionsFromFlags(opts: Record<string, unknown>, file?: { path: string; config: OptimizeConfig }): OptimizeConfig {
  const base: OptimizeConfigInput = file?.config ?? {};
  const merged = { ...base, ...flagOptions(opts, base) };
  return parseOptimizeConfig(merged, (field) => flagOf(field, opts) ?? (file ? `${file.path}: ${field}` : field));
}

/** What may change on --resume (everything else is the run's own, from its hone.db). */
const RESUMABLE = new Set(["rounds", "concurrency", "queue", "resume", "json", "out"]);

/** The leaves of a config value, as dotted paths (arrays and scalars are leaves). */
function leaves(v: unknown, at = ""): [string, unknown][] {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return [[at, v]];
  return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) => leaves(x, at ? `${at}.${k}` : k));
}

const valueAt = (v: unknown, path: string) =>
  path.split(".").reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined), v);

/**
 * On --resume: every flag given besides --rounds and --concurrency must say what the run was started with; the first
 * that does not is refused, naming the flag and the stored value (a resumed run cannot change its settings midway).
 */
export function refuseResumeMismatch(opts: Record<string, unknown>, stored: OptimizeSettings, runDir: string): void {
  const given = Object.fromEntries(Object.entries(opts).filter(([k, v]) => v !== undefined && !RESUMABLE.has(k)));
  if (Object.keys(given).length === 0) return;
  const was = configOfInput(stored);
  const asGiven = flagOptions(given, was);
  for (const [path, value] of leaves(asGiven)) {
    const before = valueAt(was, path);
    if (JSON.stringify(before) === JSON.stringify(value)) continue;
    const named = flagOf(path, given) ?? path;
    const flag = named.includes(" ") ? named : `${named} ${typeof value === "string" ? value : JSON.stringify(value)}`;
    throw new HoneError(
      "usage",
      `--resume ${runDir}: ${flag} differs from the run's ${path} (${JSON.stringify(before ?? null)}); a resumed run keeps the settings it was started with (only --rounds, --concurrency and --queue may change): drop the flag, or start a new run with --out`,
    );
  }
}
