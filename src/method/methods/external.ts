import * as z from "zod";
import { type ExternalProposal, loadExternalMethod, runExternalStep } from "../external.ts";
import { type Archive, type Budget, bestMeasured, type Cost, type Method, type Proposal } from "../method.ts";

const params = z.object({}).passthrough();
const SEED = "r00-seed";
/** How many refusals a slot's problems list in full (the rest are counted). */
const SHOWN = 20;

/**
 * What the loop takes of a program's step: at most the k proposals it asked for (in the order of their folder names;
 * the rest are refused as over), and, while a slot is left, one invalid slot that records why the program's other
 * output was refused, so a program whose every folder is refused leaves a record of why, not an empty round. When
 * every slot holds a proposal, the refusals go with the first one's state.
 */
export function takeProposals(
  step: { proposals: readonly ExternalProposal[]; refused: readonly string[] },
  k: number,
  fallbackParent: string,
): Proposal[] {
  const over = step.proposals.slice(k).map((p) => `${p.name}: over the ${k} proposal(s) asked for`);
  const refused = [...step.refused, ...over];
  const out: Proposal[] = step.proposals.slice(0, k).map((p) => ({ parents: [p.parent], dir: p.dir, rationale: p.rationale }));
  if (refused.length === 0) return out;
  const shown = refused.length > SHOWN ? [...refused.slice(0, SHOWN), `and ${refused.length - SHOWN} more`] : refused;
  if (out.length < k)
    return [...out, { parents: [fallbackParent], rationale: "no candidate: the program's output was refused", problems: shown }];
  (out[0] as Proposal).state = { external: { refused: shown } };
  return out;
}

/** A candidate's cost in the budget's unit. */
const COST_OF = {
  evaluator_calls: "evaluatorCalls",
  executor_tokens: "executorTokens",
  proposer_tokens: "proposerTokens",
  seconds: "seconds",
} as const satisfies Record<Budget["unit"], keyof Cost>;

/**
 * What is left of the budget, as the program is told it: the total less what the archive's candidates spent (the
 * loop's own count where it keeps one and it is larger), never below 0.
 */
export function budgetLeft(budget: Budget, archive: Archive): number {
  const spent = archive.candidates.reduce((sum, c) => sum + (c.cost?.[COST_OF[budget.unit]] ?? 0), 0);
  return Math.max(0, budget.total - Math.max(budget.used, spent));
}

/**
 * A method given as a program (bring your own, see external.ts): each round its entrypoint reads the archive and
 * writes harness folders; hone gates, measures and keeps them (by the ratchet; the program's own choices show in
 * what it proposes next). Its parents are what each proposal.json names.
 */
export function externalMethod(dir: string): Method<z.infer<typeof params>> {
  const program = loadExternalMethod(dir);
  return {
    name: program.name,
    summary: `a method given as a program: ${program.entrypoint.join(" ")} in ${program.dir}`,
    edits: "folder",
    params,
    startFrom: "incumbent",
    async propose(ctx) {
      const archive = ctx.archive.candidates
        .filter((c) => c.commit && c.status !== "refused")
        .map((c) => ({
          id: c.id,
          parent: c.parents[0] ?? null,
          score: c.measured?.score ?? null,
          valid: c.measured?.score !== null && c.measured?.score !== undefined,
          per_task: c.measured?.perTask,
          dir: c.dir,
          trajectories: c.measured?.trajectories,
        }));
      const left = { [ctx.budget.unit]: budgetLeft(ctx.budget, ctx.archive) };
      const step = await runExternalStep(
        program,
        { round: ctx.round, proposals: ctx.k, budget: left },
        archive,
        { model: ctx.proposer.chat, modelId: ctx.proposer.model },
        ctx.scratch,
      );
      return takeProposals(step, ctx.k, bestMeasured(ctx.archive)?.id ?? SEED);
    },
    keep: (_archive, candidate) => ({
      keep: candidate.status === "measured",
      rule: "external",
      reason: "measured; the program chooses its parents",
    }),
    choose: (archive) => bestMeasured(archive),
  };
}
