/**
 * The config files `hone init` writes, each commented field by field and tied to its JSON Schema. A new config file
 * is one template here plus one line in CONFIG_TEMPLATES.
 */
export interface ConfigTemplate {
  /** The file written into the folder. */
  file: string;
  /** Its schema under schemas/ (written by `npm run schema` from the zod schema that reads the file). */
  schema: string;
  /** The command that reads it, for the message after writing. */
  command: string;
  /** The text, given paths relative to the folder written into: hone's schemas/ and harnesses/ folders. */
  text(paths: { schemas: string; harnesses: string }): string;
}

const optimize: ConfigTemplate = {
  file: "hone.yaml",
  schema: "optimize.schema.json",
  command: "npx hone optimize --config hone.yaml",
  text: ({ schemas }) => `# yaml-language-server: $schema=${schemas}/optimize.schema.json
# hone optimize --config hone.yaml: learn a harness at test time on one task. Flags on the command line win over
# this file. Every relative path in it resolves against this file's folder, not the folder you run hone from.

# A built-in task id (npx hone tasks) or a task folder (./my-task).
task: circle-packing
# tasks_dir: ./tasks            # a folder of task folders with an optional tasks.yaml

# The harness to start from and the proposer's own (default: hone's harnesses/initial and harnesses/proposer).
# seed_harness: ./my-harness
# proposer_harness: ./my-proposer

# The frozen model that runs each harness, and the model that proposes harness changes. \`offline\` is hone's
# built-in simulator (it does not understand language); for a real model give an OpenAI-compatible endpoint.
executor:
  model: offline
  # base_url: http://127.0.0.1:8000/v1
  # dialect: vllm               # vllm for local servers, openai for hosted APIs
  # api_key_env: OPENAI_API_KEY # the variable that holds the key; never the key itself
proposer:
  model: offline

rounds: 3            # rounds of proposals after the seed round
proposals: 4         # harness changes proposed per round
max_evals: 10        # evaluator calls per rollout (default: the task's budget)
concurrency: 4       # rollouts at once
paired: false        # also roll out each candidate's parent at the same seed, for causal credit
seed: 0
warm_pool: true      # false: a fresh Python interpreter per evaluation (--cold)
# time_limit: 600    # seconds per rollout

learning:
  mode: context      # context: an experience digest in the proposer's prompt; lora: train it (needs learning.lora)
  digest_tokens: 2000

# out: runs/opt-circle-packing   # the run directory (default runs/opt-<task>-<time>); --resume continues it
`,
};

const train: ConfigTemplate = {
  file: "train.yaml",
  schema: "train.schema.json",
  command: "npx hone train --config train.yaml",
  text: ({ schemas, harnesses }) => `# yaml-language-server: $schema=${schemas}/train.schema.json
# hone train --config train.yaml: train a harness on a task panel. Each epoch measures HEAD, asks the estimator for
# one change, measures it, and the criterion promotes or rejects it. Every relative path in this file resolves
# against this file's folder.

harness: ${harnesses}/qa       # the package to train (here hone's QA solver)

panel:
  benchmark: gsm8k             # gsm8k, math500 or hotpotqa; fetch it first: npx hone datasets fetch gsm8k
  split: validation            # train and validation are divided from the train file by seed; test once, at the end
  limit: 20                    # tasks in the panel
  # data_dir: ./datasets       # where datasets live (default HONE_DATA_DIR or ~/.cache/hone/datasets)

model:
  model: offline               # the frozen executor; or base_url, model, dialect, api_key_env as in hone.yaml

estimator:                     # where each epoch's one candidate change comes from
  kind: llm                    # a proposer model writes one HarnessSpec
  proposer:
    model: offline
  # kind: patch_queue          # or your own diffs, applied in order:
  # patches: [./changes/01-prompt.diff]
  # kind: agent_cli            # or a coding agent run in the candidate's folder:
  # command: my-agent --edit .

criterion:
  kind: strict_pareto          # promote only with no regression and more solved; or mean_ci (paired bootstrap)
  secondary: [steps, tokens]   # tie-breaks after the solved sets

patch_surface: ["prompt.md", "agent.yaml"]   # globs of the files a candidate may change
concurrency: 8
seed: 0
# out: runs/train              # the run directory (default runs/train-<time>)
`,
};

const experiment: ConfigTemplate = {
  file: "experiment.yaml",
  schema: "experiment.schema.json",
  command: "npx hone compare experiment.yaml --out runs/grid",
  text: ({ schemas, harnesses }) => `# yaml-language-server: $schema=${schemas}/experiment.schema.json
# hone compare experiment.yaml --out runs/grid: a harness × method × task grid. Each cell × seed is an ordinary
# optimize run; running the command again resumes (finished cells are never run again). Every relative path in this
# file resolves against this file's folder.
name: my-grid

tasks:                          # discovery tasks: built-in ids or task folders (OpenEvolve, SkyDiscover, … layouts)
  - name: circle-packing
    splits:
      train: [circle-packing]   # what the method sees; test defaults to train (test-time discovery, said in the report)
    # tasks_dir: ./tasks        # a folder of task folders with tasks.yaml

harnesses:                      # harness packages (agent.yaml) or harness programs (harness.json)
  - name: initial
    path: ${harnesses}/initial

methods:                        # npx hone methods lists every method and its parameters
  - method: random              # the baseline every comparison reports
  - method: greedy
  - method: harnessttt
  # - method: gepa
  #   params: { use_merge: true }

# Every cell runs once per seed; the report gives each cell's mean and 95% interval over them.
seeds: [0, 1, 2]
# The frozen model that runs each harness, and the one that proposes changes (as in hone.yaml).
executor: { model: offline }    # or base_url, model, dialect, api_key_env as in hone.yaml
proposer: { model: offline }

# QA benchmarks are rows too (benchmarks: with train/validation/test splits); see README "hone compare".
# One budget in one unit for every cell: evaluator_calls, executor_tokens, proposer_tokens or seconds.
budget: { unit: evaluator_calls, size: 18 }
search: { proposals: 2, max_evals: 3, noise_repeats: 3, concurrency: 2 }
repeats: 1                      # measurements of each final choice on the test split
baseline: random                # paired differences are against this method
`,
};

export const CONFIG_TEMPLATES: ConfigTemplate[] = [optimize, train, experiment];
