import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDb } from "../../src/store/db.ts";
import { HarnessRepo } from "../../src/store/git.ts";

export interface SyntheticRunOptions {
  rounds: number;
  perRound: number;
  evalsPerRollout?: number;
  callsPerRollout?: number;
  /** Make every n-th candidate a gate refusal (no harness, no rollout). */
  refuseEvery?: number;
  status?: "running" | "finished";
  /** Size of each rollout's best_program text, as real runs store it (default: a one-line program). */
  programBytes?: number;
  /** From round 2 on, propose from a round-1 candidate's harness (a lineage more than one level deep). */
  deep?: boolean;
}

/**
 * A run directory written through hone's own store (schema, git repository) with made-up numbers: for console
 * tests and the console benchmark, where a real run of this size would take hours.
 */
export async function writeSyntheticRun(dir: string, o: SyntheticRunOptions): Promise<{ rollouts: number; candidates: number }> {
  mkdirSync(dir, { recursive: true });
  const evals = o.evalsPerRollout ?? 10;
  const calls = o.callsPerRollout ?? 4;
  const program = o.programBytes
    ? `# best\n${"x = 1.0  # a line of program text\n".repeat(Math.ceil(o.programBytes / 34))}`.slice(0, o.programBytes)
    : "print(1)";
  const repo = HarnessRepo.init(join(dir, "harnesses.git"));
  const pkg = join(dir, ".pkg");
  mkdirSync(pkg, { recursive: true });
  const commits: string[] = [];
  for (let v = 0; v < 3; v++) {
    writeFileSync(join(pkg, "prompt.md"), `You search for better programs. Version ${v}.\n`);
    writeFileSync(join(pkg, "agent.yaml"), `name: synthetic\nllm_config:\n  temperature: ${0.5 + v / 10}\n`);
    commits.push(await repo.commitDir(pkg, `v${v}`, commits[v - 1], v));
  }
  const db = openDb(join(dir, "hone.db"));
  const config = {
    task: "circle-packing",
    executor: { model: "offline" },
    proposer: { model: "offline" },
    rounds: o.rounds,
    proposals: o.perRound,
    maxEvals: evals,
    learning: { mode: "context" },
  };
  const identity = JSON.stringify({
    task: { id: "circle-packing", content: "x", metric: "combined_score", direction: "maximize" },
    executor: { endpoint: "offline", model: "offline", dialect: "vllm" },
    budget: { maxEvals: evals, timeoutSec: 60 },
    hone: "0.1.0",
    sampling: { temperature: 0.7 },
    harness: "h",
  });
  let rollouts = 0;
  let candidates = 0;
  db.transaction(() => {
    db.prepare(
      "INSERT INTO runs (id, kind, created_at, status, config, summary, finished_at) VALUES ('run', 'optimize', ?, ?, ?, ?, ?)",
    ).run(
      "2026-11-30T10:00:00.000Z",
      o.status ?? "finished",
      JSON.stringify(config),
      o.status === "running" ? null : JSON.stringify({ best_score: 2 + o.rounds / 1000, start_score: 1 }),
      o.status === "running" ? null : "2026-11-30T12:00:00.000Z",
    );
    const round = db.prepare(
      "INSERT INTO rounds (run_id, round, status, incumbent_commit, incumbent_score, best_score, moved, started_at, finished_at) VALUES ('run', ?, 'finished', ?, ?, ?, ?, ?, ?)",
    );
    const candidate = db.prepare(
      "INSERT INTO candidates (id, run_id, round, slot, parent_commit, commit_sha, ref, content_hash, spec, changed, status, gate_error, repaired, reward, advantage, score) VALUES (?, 'run', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
    );
    const rollout = db.prepare(
      "INSERT INTO rollouts (id, run_id, round, candidate_id, kind, seed, status, stop_reason, start_score, best_score, improved, evals_used, evals_invalid, prompt_tokens, completion_tokens, model_calls, seconds, dir, best_program, finished_at, identity, identity_digest) VALUES (?, 'run', ?, ?, ?, ?, 'completed', 'budget_spent', ?, ?, 1, ?, 1, 5000, 300, ?, 1.5, '', ?, '2026-11-30T11:00:00.000Z', ?, 'digest')",
    );
    const evaluation = db.prepare(
      "INSERT INTO evaluations (rollout_id, idx, valid, score, reason, program_sha, seconds) VALUES (?, ?, ?, ?, ?, 'sha', 0.05)",
    );
    const call = db.prepare(
      "INSERT INTO model_calls (run_id, role, rollout_id, round, latency_ms, prompt_tokens, completion_tokens, attempts, cached) VALUES ('run', 'executor', ?, ?, 12, 1200, 80, 1, 0)",
    );
    const addRollout = (id: string, r: number, cid: string, kind: string, start: number, best: number) => {
      rollout.run(id, r, cid, kind, rollouts, start, best, evals, calls, program, identity);
      for (let e = 1; e <= evals; e++)
        evaluation.run(id, e, e % 7 === 0 ? 0 : 1, e % 7 === 0 ? null : start + e / 1000, e % 7 === 0 ? "overlap" : null);
      for (let c = 0; c < calls; c++) call.run(id, r);
      rollouts++;
    };
    let incumbent = 1;
    candidate.run(
      "r00-seed",
      0,
      0,
      commits[0],
      commits[0],
      "refs/candidates/r00-seed",
      "h0",
      null,
      "[]",
      "seed",
      null,
      null,
      null,
      null,
    );
    candidates++;
    addRollout("r00-seed", 0, "r00-seed", "baseline", 1, 1);
    round.run(0, commits[0], 1, 1, 0, "2026-11-30T10:00:00.000Z", "2026-11-30T10:00:01.000Z");
    for (let r = 1; r <= o.rounds; r++) {
      let best = incumbent;
      for (let k = 0; k < o.perRound; k++) {
        const id = `r${String(r).padStart(2, "0")}-k${k}`;
        const refused = o.refuseEvery !== undefined && (r * o.perRound + k) % o.refuseEvery === 0;
        const score = refused ? null : incumbent + Math.sin(r * 13 + k) / 100 + 0.002;
        const sha = refused ? null : commits[1 + ((r + k) % 2)];
        candidate.run(
          id,
          r,
          k,
          o.deep && r >= 2 ? commits[1 + (r % 2)] : commits[0],
          sha,
          sha ? `refs/candidates/${id}` : null,
          sha ? `h${r}-${k}` : null,
          JSON.stringify({ sampling: { temperature: 0.5 + k / 100 } }),
          JSON.stringify([`sampling.temperature=${0.5 + k / 100}`]),
          refused ? "invalid" : "valid",
          refused ? "spec: unknown key 'foo'" : null,
          score === null ? -1 : 0.1,
          score === null ? -1 : 0.05,
          score,
        );
        candidates++;
        if (score !== null) {
          addRollout(id, r, id, "candidate", incumbent, score);
          if (score > best) best = score;
        }
      }
      round.run(r, commits[0], incumbent, best, best > incumbent ? 1 : 0, "2026-11-30T10:00:00.000Z", "2026-11-30T10:00:01.000Z");
      incumbent = Math.max(incumbent, best);
    }
  })();
  db.close();
  return { rollouts, candidates };
}

/**
 * A rollout's trajectory.jsonl and programs as the agent loop writes them, made up: `edits` edit_program calls of
 * SEARCH/REPLACE blocks 20-odd lines long, an evaluation after every fifth, and, with `reasoning`, a reasoning
 * model's thinking on each model_call event, and on each assistant event too if asked.
 */
export function writeSyntheticTrajectory(
  runDir: string,
  rolloutId: string,
  o: { edits: number; reasoning?: "assistant and model_call" | "model_call" },
): void {
  const dir = join(runDir, "rollouts", rolloutId);
  mkdirSync(join(dir, "programs"), { recursive: true });
  const events: Record<string, unknown>[] = [];
  const add = (e: Record<string, unknown>) => events.push({ t: events.length * 7, ...e });
  const body = (i: number, v: number) =>
    Array.from({ length: 22 }, (_, k) => `    centers[${k}] = [${((k * 37 + i) % 97) / 100}, ${((k * 53 + v) % 89) / 100}]`).join(
      "\n",
    );
  const thinking = (i: number) =>
    `The last score suggests the outer ring is too tight.\n${Array.from({ length: 14 }, (_, k) => `Step ${k + 1}: consider moving circle ${(i + k) % 26} outward by ${k / 100}.`).join("\n")}\nEdit ${i}: I will move the ring.`;
  add({ type: "rollout_start", model: "synthetic", max_evals: Math.ceil(o.edits / 5), start_score: 1 });
  add({ type: "message", iteration: 0, role: "system", source: "harness", content: "You improve programs.\n".repeat(20) });
  add({ type: "message", iteration: 0, role: "user", source: "task", content: "# Task\n\nPack 26 circles.\n" });
  let evaluation = 0;
  for (let i = 1; i <= o.edits; i++) {
    const reasoning = o.reasoning ? { reasoning: thinking(i) } : {};
    add({ type: "model_call", iteration: i, latency_ms: 20, attempts: 1, cached: false, ...reasoning });
    const onAssistant = o.reasoning === "assistant and model_call" ? reasoning : {};
    const edits = `<<<<<<< SEARCH\n${body(i, 0)}\n=======\n${body(i, 1)}\n>>>>>>> REPLACE`;
    const call = { id: `call_${i}`, type: "function", function: { name: "edit_program", arguments: JSON.stringify({ edits }) } };
    add({ type: "assistant", iteration: i, content: null, tool_calls: [call], ...onAssistant });
    add({ type: "tool_result", iteration: i, id: `call_${i}`, name: "edit_program", output: "Edit applied.", error: false });
    if (i % 5 !== 0) continue;
    evaluation++;
    add({ type: "model_call", iteration: i, latency_ms: 20, attempts: 1, cached: false });
    const evaluate = { id: `eval_${i}`, type: "function", function: { name: "evaluate_program", arguments: "{}" } };
    add({ type: "assistant", iteration: i, content: null, tool_calls: [evaluate] });
    const file = `programs/${String(evaluation).padStart(4, "0")}.py`;
    writeFileSync(join(dir, file), `def construct():\n${body(i, 1)}\n`);
    const score = 1 + evaluation / 100;
    add({ type: "evaluation", index: evaluation, valid: true, score, improved: true, seconds: 0.1, program_file: file });
    const output = JSON.stringify({ valid: true, score, metrics: { sum_radii: score, validity: 1 } }, null, 1);
    add({ type: "tool_result", iteration: i, id: `eval_${i}`, name: "evaluate_program", output, error: false });
  }
  add({ type: "rollout_end", status: "completed", stop_reason: "budget_spent", best_score: 1 + evaluation / 100 });
  writeFileSync(join(dir, "trajectory.jsonl"), `${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
}
