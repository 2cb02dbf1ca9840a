// HarnessTTT's proposals for one round, as its released code makes them (gray311/Self_Adapt_Harness bebde8e,
// src/outer/rounds/outer_round.py `cmd_propose`, src/outer/proposing/propose.py): K independent proposer samples,
// each its own completion at its own seed (and, with diversity, its own slot role); each compiled over the
// incumbent and gated; duplicates within the group (or of the parent) refused (`dedup_group`); then the proposal
// gate: a round with fewer valid proposals than the minimum fails, and is recorded as failed — nothing is rolled
// out, no reward or advantage is written (so nothing is trained on it), and the incumbent stays, as SAH's round
// raises before any rollout and its retry proposes afresh from the same bases.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { HoneError } from "../errors.ts";
import { applySpec, SpecError } from "../harness/compile.ts";
import { contentHash } from "../harness/files.ts";
import { loadHarness } from "../harness/package.ts";
import { changedFields } from "../harness/spec.ts";
import { experienceDigest } from "../method/digest.ts";
import { type ProposalSample, proposeSample } from "../method/proposer.ts";
import { slotNote } from "../method/proposer-roles.ts";
import { defaultMinValid, type ProposalGateMode, parseProposalGate, proposalGate } from "../method/reward.ts";
import { forScope } from "../model/cache.ts";
import { seedFrom } from "../model/offline/rng.ts";
import type { ChatResponse } from "../model/types.ts";
import { gateGeneratedCode } from "../sandbox/check.ts";
import { type CandidateInsert, type CandidateRow, finishRound, recordProposal } from "../store/candidates.ts";
import { insertDecisions } from "../store/decisions.ts";
import { insertModelCalls } from "../store/rollouts.ts";
import { candidateId, pad, type SearchContext } from "./optimize-context.ts";

/** harnessttt's parameters (methods/harnessttt.ts): the proposal gate's mode and per-slot diversity roles. */
export interface TttParams {
  proposal_gate?: string;
  diversity: boolean;
}

/** The parent the round's proposals change: its commit, folder, score and what it works on. */
export interface ProposalParent {
  commit: string;
  dir: string;
  score?: number;
  work: { program?: string; results?: string };
}

export const responseRows = (responses: ChatResponse[]) =>
  responses.map((r) => ({
    latencyMs: r.latency_ms,
    promptTokens: r.usage.prompt_tokens,
    completionTokens: r.usage.completion_tokens,
    attempts: r.attempts,
    cached: Boolean(r.cached),
    faults: r.faults ? JSON.stringify(r.faults) : null,
  }));

/** The digest the proposer reads; rewards only where they cannot give a hidden reference away. */
export function digestOf(ctx: SearchContext): string {
  return experienceDigest(ctx.db, ctx.runId, {
    tokenBudget: ctx.settings.learning.digestTokens,
    metric: ctx.target.metric,
    direction: ctx.target.direction,
    showRewards: ctx.target.showRewards,
  });
}

/** Compiles a spec over the parent into `dir` and gates it: the problems, empty when accepted. */
async function compiled(ctx: SearchContext, parentDir: string, dir: string, spec: Parameters<typeof applySpec>[1]) {
  rmSync(dir, { recursive: true, force: true });
  try {
    applySpec(parentDir, spec, dir);
  } catch (err) {
    if (err instanceof SpecError) return [err.message];
    throw err;
  }
  return ctx.target.gate(dir);
}

/** SAH's `dedup_group`: in slot order, a valid proposal whose harness equals the parent's or an earlier slot's is refused. */
function dedup(ctx: SearchContext, round: number, parent: ProposalParent, samples: ProposalSample[]): void {
  const seen = new Map<string, string>([[contentHash(parent.dir), "its parent"]]);
  samples.forEach((s, slot) => {
    if (!s.spec) return;
    const dir = join(ctx.dir, "candidates", candidateId(round, slot));
    const hash = contentHash(dir);
    const same = seen.get(hash);
    if (same === undefined) {
      seen.set(hash, candidateId(round, slot));
      return;
    }
    s.spec = undefined;
    s.repaired = false;
    s.problems = [`duplicate: the same harness as ${same}`];
    rmSync(dir, { recursive: true, force: true });
  });
}

/** K independent samples over the parent, each gated, committed and recorded with its own prompt and completion. */
export async function proposeRoundTtt(
  ctx: SearchContext,
  round: number,
  parent: ProposalParent,
  params: TttParams,
): Promise<void> {
  const { settings } = ctx;
  const harness = loadHarness(parent.dir, { generatedCode: gateGeneratedCode });
  const digest = digestOf(ctx);
  const model = forScope(ctx.proposer.model, `proposer-r${pad(round)}`);
  const k = settings.proposals;
  const samples = await Promise.all(
    Array.from({ length: k }, (_, slot) => {
      const dir = join(ctx.dir, "candidates", candidateId(round, slot));
      return proposeSample(
        model,
        ctx.proposerHarness,
        {
          task: ctx.target.proposerTask,
          incumbent: { harness, score: parent.score, ...parent.work },
          digest,
          round,
          slotNote: slotNote(slot, ctx.target.kind, params.diversity),
        },
        (spec) => compiled(ctx, parent.dir, dir, spec),
        { seed: seedFrom(settings.seed, round, "proposer", slot), trial: slot },
      );
    }),
  );
  dedup(ctx, round, parent, samples);
  const commits = await Promise.all(
    samples.map(async (s, slot) => {
      const id = candidateId(round, slot);
      const dir = join(ctx.dir, "candidates", id);
      if (!s.spec) {
        rmSync(dir, { recursive: true, force: true });
        ctx.repo.dropRef(`refs/candidates/${id}`); // one a killed attempt left, when this attempt's slot has no commit
        return null;
      }
      const what = changedFields(s.spec).join(", ") || "change";
      const commit = await ctx.repo.commitDir(dir, `${id}: ${what}`, parent.commit, round * 100 + slot + 1);
      ctx.repo.replaceRef(`refs/candidates/${id}`, commit); // recorded below; one a killed attempt left is replaced
      return commit;
    }),
  );
  const rows: CandidateInsert[] = samples.map((s, slot) => {
    const id = candidateId(round, slot);
    const commit = commits[slot] ?? null;
    return {
      id,
      round,
      slot,
      parentCommit: parent.commit,
      commit,
      ref: commit ? `refs/candidates/${id}` : null,
      contentHash: commit ? contentHash(join(ctx.dir, "candidates", id)) : null,
      spec: s.spec ? JSON.stringify(s.spec) : s.raw === undefined ? null : JSON.stringify(s.raw),
      changed: s.spec ? changedFields(s.spec) : [],
      status: s.spec ? (s.repaired ? "repaired" : "valid") : "invalid",
      gateError: s.problems.length ? s.problems.join("; ") : null,
      repaired: s.repaired,
    };
  });
  // The proposer's calls with the round's candidates, in one transaction: a resumed round with no candidates proposes
  // again, and must not find the calls of the attempt a kill cut short already counted.
  ctx.db.transaction(() => {
    insertModelCalls(ctx.db, ctx.runId, "proposer", null, round, responseRows(samples.flatMap((s) => s.responses)));
    recordProposal(
      ctx.db,
      ctx.runId,
      round,
      {
        model: ctx.proposer.modelName,
        messages: samples.map((s) => s.messages),
        completion: {
          samples: samples.map((s) => ({ completion: s.completion, repair_completion: s.repairCompletion ?? null })),
        },
      },
      rows,
    );
  })();
}

/** The gate's mode for K proposals: the parameter, or SAH's min6 of 8 scaled to K. */
export function gateMode(params: TttParams, k: number): ProposalGateMode {
  if (!params.proposal_gate) return { kind: "min", min: defaultMinValid(k) };
  try {
    return parseProposalGate(params.proposal_gate, k);
  } catch (err) {
    throw new HoneError("usage", `--param proposal_gate=${params.proposal_gate}: ${(err as Error).message}`);
  }
}

/** The proposal gate over a round's recorded candidates (valid and repaired proposals count, as SAH's `valid`). */
export function roundGate(cands: CandidateRow[], k: number, params: TttParams) {
  const valid = cands.filter((c) => c.status === "valid" || c.status === "repaired").length;
  return { valid, ...proposalGate(valid, k, gateMode(params, k)) };
}

/**
 * Records a round the proposal gate failed: a decision per slot (rule `proposal_gate`, nothing measured), the round
 * closed as `failed` with the incumbent unmoved; no reward or advantage is written. `alsoWrite` (the keep decisions)
 * runs in the same transaction: a resumed run returns at once from a failed round, so nothing may be left to write.
 */
export function failRound(
  ctx: SearchContext,
  round: number,
  cands: CandidateRow[],
  gate: ReturnType<typeof roundGate>,
  alsoWrite: () => void,
): void {
  const why = `the round failed the proposal gate: ${gate.message}; nothing was measured and the incumbent stays`;
  ctx.db.transaction(() => {
    insertDecisions(
      ctx.db,
      ctx.runId,
      round,
      cands.map((c) => ({
        candidate_id: c.id,
        decision: "unmeasurable",
        rule: "proposal_gate",
        reason: c.status === "invalid" ? `${why}; this proposal was refused: ${c.gate_error ?? "invalid"}` : why,
        score: null,
        detail: { valid: gate.valid, k: cands.length, min_valid: gate.minValid },
      })),
    );
    alsoWrite();
    finishRound(ctx.db, ctx.runId, round, null, false, "failed");
  })();
  ctx.emit({ type: "notice", text: `  round ${round} failed the proposal gate: ${gate.message}` });
}
