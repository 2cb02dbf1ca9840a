import * as z from "zod";
import { loadExternalMethod, runExternalStep } from "../external.ts";
import { bestMeasured, type Method } from "../method.ts";

const params = z.object({}).passthrough();

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
        }));
      const left = { [ctx.budget.unit]: Math.max(0, ctx.budget.total - ctx.budget.used) };
      const step = await runExternalStep(
        program,
        { round: ctx.round, proposals: ctx.k, budget: left },
        archive,
        { model: ctx.proposer.chat, modelId: ctx.proposer.model },
        ctx.scratch,
      );
      return step.proposals.map((p) => ({ parents: [p.parent], dir: p.dir, rationale: p.rationale }));
    },
    keep: (_archive, candidate) => ({
      keep: candidate.status === "measured",
      rule: "external",
      reason: "measured; the program chooses its parents",
    }),
    choose: (archive) => bestMeasured(archive),
  };
}
