import { join, resolve } from "node:path";
import type { BenchmarkDef, DatasetFile, Gold, QATask, Split } from "../benchmark.ts";
import { openTauWorld, readTauTasks, type TauTaskRef } from "../tau/tau-env.ts";

/** The last commit of sierra-research/tau-bench (its tasks as last corrected). */
const COMMIT = "59a200c6d575d595120f1cb70fea53cef0632f6b";
const base = (domain: string) => `https://raw.githubusercontent.com/sierra-research/tau-bench/${COMMIT}/tau_bench/envs/${domain}`;

function tauRef(gold: Gold): TauTaskRef {
  const g = gold as Partial<TauTaskRef> | null;
  if (!g || typeof g.dir !== "string" || (g.domain !== "retail" && g.domain !== "airline") || typeof g.file !== "string")
    throw new Error("tau-bench: the gold is {dir, domain, file, index}");
  return g as TauTaskRef;
}

/** The reward record the environment gives (tau_env.py): τ-bench's reward, 1 or 0. */
function rewardOf(response: string): number {
  try {
    const r = JSON.parse(response) as { reward?: unknown };
    return r.reward === 1 ? 1 : 0;
  } catch {
    return 0;
  }
}

/**
 * τ-bench (Yao et al. 2024) in one domain: each task is a conversation between the agent and a simulated user who
 * holds the task's instruction, in an environment of tools over a database, under the domain's policy. Scored by
 * τ-bench's reward: 1 when the final database equals the one the gold actions produce and every required output was
 * said to the user, else 0 (a conversation that never ends, by the user's ###STOP### or a transfer, scores 0).
 */
export function tauBenchmark(o: {
  domain: "retail" | "airline";
  files: (Omit<DatasetFile, "url"> & { split?: Split })[];
  sizes: Partial<Record<Split, number>>;
}): BenchmarkDef {
  const id = `tau-bench-${o.domain}`;
  const files = o.files.map(({ split: _s, ...f }) => ({ ...f, url: `${base(o.domain)}/${f.name}` }));
  return {
    id,
    title: `τ-bench ${o.domain} (tool-using agent, simulated user)`,
    licence: "MIT",
    homepage: "https://github.com/sierra-research/tau-bench",
    files,
    sizes: o.sizes,
    load: async (dirArg) => {
      const dir = resolve(dirArg);
      const out: Partial<Record<Split, QATask[]>> = {};
      for (const f of o.files.filter((x) => x.split)) {
        const split = f.split as Split;
        out[split] = (await readTauTasks(join(dir, f.name))).map((t) => ({
          id: `${id}-${split}-${t.index}`,
          question: t.instruction,
          gold: { dir, domain: o.domain, file: f.name, index: t.index },
        }));
      }
      return out;
    },
    scorer: {
      metrics: ["reward"],
      score: "reward",
      apply: (response) => ({ reward: rewardOf(response) }),
      extract: (response) => String(rewardOf(response)),
    },
    answerFormat: "a conversation: the agent helps the user through the tools, within the policy",
    oracleAnswer: () => {
      throw new Error(`${id}: the oracle acts in the task's environment (oracle_answer in a conversation)`);
    },
    wrongAnswer: () => {
      throw new Error(`${id}: the wrong oracle acts in the task's environment (oracle_answer in a conversation)`);
    },
    conversation: {
      open: (task) => openTauWorld(tauRef(task.gold)),
      instruction: (task) => task.question,
    },
  };
}
