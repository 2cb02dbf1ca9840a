// A method's propose and keep steps inside an optimize round: proposals compiled, gated, committed and recorded
// like the HarnessTTT round's, measured by the same rollouts and ratchet, then kept or dropped by the method's rule.
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { applySpec, SpecError } from "../harness/compile.ts";
import { contentHash } from "../harness/files.ts";
import { loadHarness } from "../harness/package.ts";
import { changedFields } from "../harness/spec.ts";
import type { Archive, Candidate, Method, Proposal, ProposeContext, Proposer } from "../method/method.ts";
import { proposeSample } from "../method/proposer.ts";
import { forScope } from "../model/cache.ts";
import { seedFrom } from "../model/offline/rng.ts";
import type { ChatResponse } from "../model/types.ts";
import { rng } from "../rng.ts";
import { gateGeneratedCode } from "../sandbox/check.ts";
import { type CandidateInsert, recordProposal, roundCandidates, setRewards } from "../store/candidates.ts";
import { roundDecisions } from "../store/decisions.ts";
import { insertMethodProposal, setMethodKeep } from "../store/method-state.ts";
import { insertModelCalls } from "../store/rollouts.ts";
import { buildArchive, harnessFiles } from "./optimize-archive.ts";
import { candidateId, pad, type SearchContext } from "./optimize-context.ts";
import { digestOf, responseRows } from "./optimize-proposals.ts";

/** The proposer as a method calls it: scoped per round, so the n-th identical request replays as the n-th. */
function roundProposer(ctx: SearchContext, round: number, responses: ChatResponse[]): Proposer {
  const scoped = forScope(ctx.proposer.model, `proposer-r${pad(round)}`);
  const model = {
    id: scoped.id,
    complete: async (...a: Parameters<typeof scoped.complete>) => {
      const r = await scoped.complete(...a);
      responses.push(r);
      return r;
    },
  };
  return {
    model: ctx.proposer.modelName,
    chat: model,
    async complete(messages, o = {}) {
      const r = await model.complete({
        messages,
        sampling: {
          temperature: o.temperature,
          max_tokens: o.maxTokens,
          seed: seedFrom(ctx.settings.seed, round, `method-${o.sample ?? 0}`),
        },
        trial: o.sample,
      });
      return { text: r.message.content ?? "", usage: r.usage };
    },
  };
}

/**
 * hone's spec proposer over one candidate of the archive: `k` independent samples (the proposer harness's prompt,
 * one repair each with every problem fed back), the n-th call of a round numbering its samples after the previous
 * calls', so no two samples of a round are the same request.
 */
function specProposals(
  ctx: SearchContext,
  round: number,
  archive: Archive,
  responses: ChatResponse[],
): ProposeContext<unknown>["specProposals"] {
  let drawn = 0;
  return async (parentId, k) => {
    const parent = archive.candidates.find((c) => c.id === parentId);
    if (!parent?.commit) return [];
    const harness = loadHarness(ctx.candidateDir(parent.id, parent.commit), { generatedCode: gateGeneratedCode });
    const digest = digestOf(ctx);
    const model = forScope(ctx.proposer.model, `proposer-r${pad(round)}-specs`);
    const first = drawn;
    drawn += k;
    const out = await Promise.all(
      Array.from({ length: k }, (_, i) =>
        proposeSample(
          model,
          ctx.proposerHarness,
          {
            task: ctx.target.proposerTask,
            incumbent: { harness, score: parent.measured?.score ?? undefined, ...ctx.workOf(parent) },
            digest,
            round,
          },
          async () => [], // the gate runs when each proposal is compiled into its candidate folder
          { seed: seedFrom(ctx.settings.seed, round, "proposer", first + i), trial: first + i },
        ),
      ),
    );
    for (const s of out) responses.push(...s.responses);
    return out.map((s) => ({ spec: s.spec, problems: s.problems, sample: { messages: s.messages, completion: s.completion } }));
  };
}

/** Compiles one proposal into `candidates/<id>/` and gates it; the problems, empty when it is accepted. */
async function compile(ctx: SearchContext, p: Proposal, parentDir: string, dir: string): Promise<string[]> {
  rmSync(dir, { recursive: true, force: true });
  try {
    if (p.spec) applySpec(parentDir, p.spec, dir);
    else if (p.dir) cpSync(p.dir, dir, { recursive: true });
    else return p.problems?.length ? p.problems : ["the proposal has neither a spec nor a folder"];
  } catch (err) {
    if (err instanceof SpecError) return [err.message];
    throw err;
  }
  return ctx.target.gate(dir);
}

/** A method's proposals for a round, each compiled, gated, committed and recorded with the proposer's calls. */
export async function proposeWithMethod<P>(
  ctx: SearchContext,
  round: number,
  inc: { commit: string; dir: string },
  method: Method<P>,
  params: P,
): Promise<void> {
  const archive = buildArchive(ctx);
  const responses: ChatResponse[] = [];
  const scratch = join(ctx.dir, ".proposals", `r${pad(round)}`);
  rmSync(scratch, { recursive: true, force: true });
  const proposals = await method.propose({
    scratch,
    archive,
    round,
    k: ctx.settings.proposals,
    params,
    rng: rng(seedFrom(ctx.settings.seed, round, "method")),
    proposer: roundProposer(ctx, round, responses),
    task: ctx.target.brief,
    budget: ctx.budget(),
    files: (id) => harnessFiles(ctx, archive, id),
    specProposals: specProposals(ctx, round, archive, responses),
  });
  const rows: CandidateInsert[] = [];
  const methodRows: Parameters<typeof insertMethodProposal>[2][] = [];
  for (const [slot, p] of proposals.entries()) {
    const id = candidateId(round, slot);
    const dir = join(ctx.dir, "candidates", id);
    const parent = archive.candidates.find((c) => c.id === p.parents[0]) ?? archive.candidates.find((c) => c.id === "r00-seed");
    const parentCommit = parent?.commit ?? inc.commit;
    const parentDir = parent?.commit ? ctx.candidateDir(parent.id, parent.commit) : inc.dir;
    const problems = await compile(ctx, p, parentDir, dir);
    let commit: string | null = null;
    if (problems.length === 0) {
      const what = p.spec ? changedFields(p.spec).join(", ") : "harness folder";
      commit = await ctx.repo.commitDir(dir, `${id}: ${method.name}: ${what || "change"}`, parentCommit, round * 100 + slot + 1);
      ctx.repo.replaceRef(`refs/candidates/${id}`, commit); // recorded below; one a killed attempt left is replaced
    } else {
      rmSync(dir, { recursive: true, force: true });
      ctx.repo.dropRef(`refs/candidates/${id}`); // one a killed attempt left, when this attempt's slot has no commit
    }
    rows.push({
      id,
      round,
      slot,
      parentCommit,
      commit,
      ref: commit ? `refs/candidates/${id}` : null,
      contentHash: commit ? contentHash(dir) : null,
      spec: p.spec ? JSON.stringify(p.spec) : null,
      changed: p.spec ? changedFields(p.spec) : ["folder"],
      status: problems.length ? "invalid" : "valid",
      gateError: problems.length ? problems.join("; ") : null,
      repaired: false,
    });
    methodRows.push({
      candidate_id: id,
      method: method.name,
      parents: p.parents,
      rationale: p.rationale ?? null,
      state: p.state ?? null,
    });
  }
  rmSync(join(ctx.dir, ".proposals"), { recursive: true, force: true });
  // The method's rows and the proposer's calls with the round's candidates, in one transaction: a resumed round with
  // no candidates proposes again, and must find nothing of the attempt a kill cut short.
  ctx.db.transaction(() => {
    for (const m of methodRows) insertMethodProposal(ctx.db, ctx.runId, m);
    insertModelCalls(ctx.db, ctx.runId, "proposer", null, round, responseRows(responses));
    // Each slot's own sample, as the harnessttt round records its samples (what on-policy learning reads).
    recordProposal(
      ctx.db,
      ctx.runId,
      round,
      {
        model: ctx.proposer.modelName,
        messages: proposals.map((p) => p.sample?.messages ?? null),
        completion: {
          method: method.name,
          samples: proposals.map((p) => (p.sample ? { completion: p.sample.completion } : null)),
        },
      },
      rows,
    );
  })();
}

/**
 * After a round is measured: the method's keep rule on each of the round's measured candidates, recorded with its
 * score in one transaction, so a kill never leaves a decision without its score. A candidate decided before (a resumed
 * round) keeps its decision; its score is written again, which mends a run a kill left so by an earlier version.
 */
export function keepWithMethod<P>(ctx: SearchContext, round: number, method: Method<P>, params: P): void {
  const archive = buildArchive(ctx);
  ctx.db.transaction(() => {
    for (const c of archive.candidates) {
      if (c.round !== round || c.status === "pending") continue;
      if (!c.kept) setMethodKeep(ctx.db, ctx.runId, c.id, method.name, keepDecision(archive, c, method, params));
      setRewards(ctx.db, [{ id: c.id, reward: null, advantage: null, score: c.measured?.score ?? null }]);
    }
  })();
}

function keepDecision<P>(archive: Archive, c: Candidate, method: Method<P>, params: P) {
  return c.status === "measured"
    ? method.keep(archive, c, params)
    : { keep: false, rule: c.status, reason: c.reason ?? c.status };
}

/**
 * HarnessTTT keeps by the ratchet: each of a round's ratchet decisions is recorded as its keep decision too (kept
 * when promoted), and a proposal the gate refused as not kept, so its runs show their keep decisions as every other
 * method's do. Called where the round's decisions are written, in the same transaction.
 */
export function keepByRatchet(ctx: Pick<SearchContext, "db" | "runId">, method: string, round: number): void {
  const decided = new Set<string>();
  for (const d of roundDecisions(ctx.db, ctx.runId, round)) {
    setMethodKeep(ctx.db, ctx.runId, d.candidate_id, method, { keep: d.decision === "promote", rule: d.rule, reason: d.reason });
    decided.add(d.candidate_id);
  }
  for (const c of roundCandidates(ctx.db, ctx.runId, round))
    if (!decided.has(c.id) && c.status === "invalid")
      setMethodKeep(ctx.db, ctx.runId, c.id, method, {
        keep: false,
        rule: "refused",
        reason: c.gate_error ?? "refused by the gate",
      });
}
