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
 * The evaluator runs a rollout's generated tools ask for, one at a time (as the agent's own tool calls run them):
 * `Promise.all` over ctx.probe() or ctx.evaluate() queues them instead of starting dozens of evaluator processes at
 * once. Runs still waiting for their turn can be dropped (a call cut short by a limit or the rollout's deadline):
 * they never start, and `drop` gives back what was counted for them.
 */
class EvaluatorTurns {
  private busy = false;
  private readonly waiting: { start: () => void; drop: () => void }[] = [];

  run(work: () => Promise<string>, drop: () => string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const start = () => {
        this.busy = true;
        Promise.resolve()
          .then(work)
          .then(resolve, reject)
          .finally(() => this.next());
      };
      if (this.busy) this.waiting.push({ start, drop: () => resolve(drop()) });
      else start();
    });
  }

  private next(): void {
    this.busy = false;
    this.waiting.shift()?.start();
  }

  dropWaiting(): void {
    for (const w of this.waiting.splice(0)) w.drop();
  }
}

/**
 * Staged edits a rollout records one by one: a tool may stage thousands in one call (each a line of the trajectory),
 * so past this many, one more line says the rest are not recorded.
 */
export const MAX_STAGED_EVENTS = 200;

const droppedRun = (kind: string) =>
  JSON.stringify({ error: `ctx.${kind}() was dropped before it started: the tool's call ended at a limit` });

/**
 * What a generated tool's ctx reaches in a discovery rollout: the current program (read), stageEdit through the
 * EVOLVE-block rules, probe (validity only, outside the budget, at most `maxProbes` per rollout), evaluate (charged,
 * the same summary evaluate_program returns) and read-only task inputs. Probes and evaluations are counted when
 * they are asked for, before they start, so concurrent calls (Promise.all) cannot pass the cap or the budget; they
 * run one at a time, in the order asked.
 */
export function discoveryToolHost(
  env: DiscoveryEnvironment,
  task: TaskInputs,
  trajectory: TrajectorySink,
  maxProbes: number,
): ToolHost {
  let probes = 0;
  let evaluating = 0;
  let staged = 0;
  const turns = new EvaluatorTurns();
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
        staged++;
        if (staged <= MAX_STAGED_EVENTS) trajectory.write({ type: "staged_edit", lines: next.split("\n").length });
        else if (staged === MAX_STAGED_EVENTS + 1)
          trajectory.write({
            type: "staged_edit",
            lines: next.split("\n").length,
            note: `more than ${MAX_STAGED_EVENTS} staged edits in this rollout: later ones are not recorded one by one`,
          });
        return JSON.stringify({ ok: true });
      } catch (err) {
        if (err instanceof EditError) return JSON.stringify({ ok: false, error: err.message });
        throw err;
      }
    },
    probe(): Promise<string> {
      if (probes >= maxProbes)
        return Promise.resolve(JSON.stringify({ error: `probe limit (${maxProbes} per rollout) reached` }));
      probes++;
      const probe = async () => {
        const e = await env.probe();
        trajectory.write({ type: "probe", valid: e.valid, reason: e.reason });
        return JSON.stringify({ valid: e.valid, reason: e.reason ?? null });
      };
      return turns.run(probe, () => {
        probes--;
        return droppedRun("probe");
      });
    },
    evaluate(): Promise<string> {
      const spent = JSON.stringify({ error: `the evaluator budget (${env.total} calls) is spent` });
      if (env.left - evaluating <= 0) return Promise.resolve(spent);
      evaluating++;
      const evaluate = async () => {
        try {
          const done = await env.evaluateCurrent();
          return done ? JSON.stringify(done.summary) : spent;
        } finally {
          evaluating--;
        }
      };
      return turns.run(evaluate, () => {
        evaluating--;
        return droppedRun("evaluate");
      });
    },
    dropWaiting: () => turns.dropWaiting(),
  };
}
