// `hone log` for the run kinds without rounds of proposals: a train run's epochs and solved matrix, an eval's tasks,
// a run's rollout. Reads records only.
import { allRounds } from "../../store/candidates.ts";
import type { Db } from "../../store/db.ts";
import { allDecisions } from "../../store/decisions.ts";
import { measurements, solvedMatrix, taskResults } from "../../store/qa.ts";
import { rolloutSummaries } from "../../store/receipts.ts";
import { formatScore } from "../output.ts";

const MARK = { solved: "#", unsolved: ".", infra: "!" } as const;

export function trainLog(db: Db) {
  const decisions = allDecisions(db);
  const ms = measurements(db);
  const byCandidate = new Map(ms.map((m) => [m.candidate_id, m]));
  const rounds = allRounds(db).map((r) => {
    const id = `epoch-${String(r.round).padStart(2, "0")}`;
    const m = byCandidate.get(id);
    return { ...r, candidate: id, measurement: m ?? null, decision: decisions.get(id) ?? null };
  });
  const matrix = solvedMatrix(db);
  return { epochs: rounds, measurements: ms, solved: matrix };
}

export function printTrainLog(db: Db, gateErrors: Map<string, string | null>): string[] {
  const { epochs, measurements: ms, solved } = trainLog(db);
  const lines: string[] = [];
  for (const e of epochs) {
    const m = e.measurement;
    const solvedText = m
      ? `solved ${m.solved ?? "?"}/${m.tasks}${m.status === "pending" ? " (pending: still being measured)" : ""}`
      : "";
    if (e.round === 0) {
      lines.push(`epoch 0  seed @ ${e.incumbent_commit.slice(0, 10)}  ${solvedText}  mean ${formatScore(m?.mean_score ?? null)}`);
      continue;
    }
    const skip = gateErrors.get(e.candidate);
    const head = `epoch ${e.round}  incumbent ${formatScore(e.incumbent_score)} @ ${e.incumbent_commit.slice(0, 10)}`;
    if (skip) lines.push(`${head}  skipped: ${skip}`);
    else if (e.decision)
      lines.push(
        `${head}  ${e.candidate} ${solvedText}  ${e.decision.decision} by ${e.decision.rule}: ${e.decision.reason}${e.moved ? "  → moved" : ""}`,
      );
    else lines.push(`${head}  ${e.candidate} ${solvedText || "(proposing)"}${e.status !== "finished" ? ` [${e.status}]` : ""}`);
  }
  if (ms.length) {
    lines.push("", "solved per task (# solved, . unsolved, ! infrastructure failure; one column per task):");
    for (const m of ms)
      lines.push(
        `  ${m.candidate_id.padEnd(9)} ${solved
          .filter((s) => s.measurement_id === m.id)
          .map((s) => MARK[s.status])
          .join("")}${m.status === "pending" ? "  (pending)" : ""}`,
      );
  }
  return lines;
}

export function evalLog(db: Db) {
  const m = measurements(db)[0];
  return { measurement: m ?? null, tasks: m ? taskResults(db, m.id) : [] };
}

export function printEvalLog(db: Db): string[] {
  const { measurement: m, tasks } = evalLog(db);
  if (!m) return ["no measurement recorded"];
  const lines = [
    `${m.benchmark}/${m.split ?? "-"}: solved ${m.solved ?? "?"} of ${m.tasks}, ${m.infra ?? 0} infrastructure failures, mean score ${formatScore(m.mean_score)} (${m.status})`,
  ];
  for (const t of tasks)
    lines.push(
      `  ${MARK[t.status]} ${t.task_id.padEnd(16)} ${t.status.padEnd(8)} score ${formatScore(t.score).padStart(8)}  steps ${String(t.steps).padStart(3)}  tokens ${String(t.tokens).padStart(6)}${t.error ? `  error: ${t.error.slice(0, 80)}` : ""}`,
    );
  return lines;
}

export function printRunLog(db: Db): string[] {
  return rolloutSummaries(db).map(
    (r) =>
      `rollout ${r.id}: ${r.status} (${r.stop_reason ?? "-"})${r.error ? ` ${r.error}` : ""}; start ${formatScore(r.start_score)}, best ${formatScore(r.best_score)}; ${r.evals_used} evaluations (${r.evals_invalid} invalid), ${r.seconds.toFixed(1)} s`,
  );
}
