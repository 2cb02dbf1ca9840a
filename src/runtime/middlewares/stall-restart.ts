import type { Middleware } from "../middleware.ts";

export interface StallHost {
  revertToBest(): boolean;
  bestScore(): number | undefined;
}

/**
 * After S evaluations without a new best, puts the best program back; at most R times per rollout. A new best is read
 * from the host (the rollout's best score moved), not from the tool's output, which a middleware after this one (hooks
 * run last→first, so hone:long_tool_output listed below it) may have cut or rewritten.
 */
export function stallRestart(params: { after_evaluations: number; max_restarts: number }, host: StallHost): Middleware {
  let sinceImprovement = 0;
  let restarts = 0;
  let best = host.bestScore();
  return {
    name: "stall_restart",
    afterTool(_view, call, output) {
      if (call.name !== "evaluate_program" || output.startsWith("Error")) return;
      const now = host.bestScore();
      if (now !== best) {
        best = now;
        sinceImprovement = 0;
        return;
      }
      sinceImprovement++;
      if (sinceImprovement < params.after_evaluations || restarts >= params.max_restarts) return;
      sinceImprovement = 0;
      if (!host.revertToBest()) return;
      restarts++;
      return {
        output: `${output}\n[stall_restart] No improvement in ${params.after_evaluations} evaluations: the program was reverted to the best version (score ${now}). Try a different direction.`,
        note: `restart ${restarts} of ${params.max_restarts}`,
      };
    },
  };
}
