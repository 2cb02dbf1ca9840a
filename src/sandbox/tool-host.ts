import type { DiscoveryEnvironment } from "../runtime/discovery-env.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { EditError } from "../task/evolve-block.ts";
import type { ToolHost } from "./isolate.ts";

export interface TaskInputs {
  id: string;
  description: string;
  metric: string;
  direction: string;
  reference: number | null;
}

/** The read-only task inputs a generated tool sees: never the evaluator, hidden data or secrets. */
export function taskInputs(task: Pick<DiscoveryTask, "id" | "description" | "metric" | "direction" | "reference">): TaskInputs {
  return {
    id: task.id,
    description: task.description,
    metric: task.metric,
    direction: task.direction,
    reference: task.reference?.value ?? null,
  };
}

/**
 * What a generated tool's ctx reaches in a discovery rollout: the current program (read), stageEdit through the
 * EVOLVE-block rules, probe (validity only, outside the budget, at most `maxProbes` per rollout), evaluate (charged,
 * the same summary evaluate_program returns) and read-only task inputs. Probes and evaluations are counted when
 * they are asked for, before they start, so concurrent calls (Promise.all) cannot pass the cap or the budget.
 */
export function discoveryToolHost(
  env: DiscoveryEnvironment,
  task: TaskInputs,
  trajectory: TrajectorySink,
  maxProbes: number,
): ToolHost {
  let probes = 0;
  let evaluating = 0;
  return {
    taskJson: JSON.stringify({ ...task, budget: { total: env.total } }),
    program: () => env.program,
    stage(editJson: string): string {
      let edit: unknown;
      try {
        edit = JSON.parse(editJson);
      } catch {
        return JSON.stringify({ ok: false, error: "the edit is not JSON" });
      }
      if (!edit || typeof edit !== "object")
        return JSON.stringify({ ok: false, error: "stageEdit takes { edits } or { block }" });
      try {
        const next = env.applyEdit(edit as Record<string, unknown>);
        env.program = next;
        trajectory.write({ type: "staged_edit", lines: next.split("\n").length });
        return JSON.stringify({ ok: true });
      } catch (err) {
        if (err instanceof EditError) return JSON.stringify({ ok: false, error: err.message });
        throw err;
      }
    },
    async probe(): Promise<string> {
      if (probes >= maxProbes) return JSON.stringify({ error: `probe limit (${maxProbes} per rollout) reached` });
      probes++;
      const e = await env.probe();
      trajectory.write({ type: "probe", valid: e.valid, reason: e.reason });
      return JSON.stringify({ valid: e.valid, reason: e.reason ?? null });
    },
    async evaluate(): Promise<string> {
      const spent = JSON.stringify({ error: `the evaluator budget (${env.total} calls) is spent` });
      if (env.left - evaluating <= 0) return spent;
      evaluating++;
      try {
        const done = await env.evaluateCurrent();
        return done ? JSON.stringify(done.summary) : spent;
      } finally {
        evaluating--;
      }
    },
  };
}
