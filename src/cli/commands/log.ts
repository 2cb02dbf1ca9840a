import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { HoneError } from "../../errors.ts";
import { describeNoise } from "../../measure/noise.ts";
import { oneLine, printableText } from "../../printable.ts";
import type { Db } from "../../store/db.ts";
import type { HarnessRepo } from "../../store/git.ts";
import { formatScore, printJson, readRunRecords } from "../output.ts";

async function openRun(dir: string) {
  if (!existsSync(join(dir, "hone.db"))) throw new HoneError("usage", `${dir} is not a run directory (no hone.db)`);
  const { openDb } = await import("../../store/db.ts");
  const { HarnessRepo } = await import("../../store/git.ts");
  return { db: openDb(join(dir, "hone.db"), { readonly: true }), repo: new HarnessRepo(join(dir, "harnesses.git")) };
}

/**
 * A run folder may come from someone else: what its records hold (a gate's error, a decision's reason, a rollout's
 * error, a proposer's file names) is printed one line per line, its control characters and line breaks escaped.
 */
const writeLines = (lines: string[]) => process.stdout.write(`${lines.map(oneLine).join("\n")}\n`);

async function optimizeLog(db: Db, repo: HarnessRepo, json: boolean): Promise<void> {
  const { allCandidates, allRounds } = await import("../../store/candidates.ts");
  const { allDecisions } = await import("../../store/decisions.ts");
  const { loadNoise } = await import("../../store/noise.ts");
  const main = repo.resolve("refs/heads/main");
  const rounds = allRounds(db);
  const cands = allCandidates(db);
  const decisions = allDecisions(db);
  const noise = loadNoise(db, "run");
  if (json) {
    printJson({
      kind: "optimize",
      main,
      noise: noise ?? null,
      rounds,
      candidates: cands.map((c) => ({ ...c, changed: JSON.parse(c.changed ?? "[]"), decision: decisions.get(c.id) ?? null })),
    });
    return;
  }
  const lines: string[] = [];
  if (noise)
    lines.push(
      `noise    ${describeNoise({ ...noise, stochastic: noise.stochastic === 1, basis: noise.basis as "measured" })}, ${noise.repeats} repeats per comparison`,
    );
  for (const r of rounds) {
    lines.push(
      `round ${r.round}  incumbent ${formatScore(r.incumbent_score)} @ ${r.incumbent_commit.slice(0, 10)}  best ${formatScore(r.best_score)}${r.moved ? "  → moved" : ""}`,
    );
    for (const c of cands.filter((x) => x.round === r.round)) {
      const mark =
        c.commit_sha && c.commit_sha === main
          ? "*"
          : c.commit_sha && repo.isAncestor(c.commit_sha, main ?? c.commit_sha)
            ? "+"
            : " ";
      const what =
        c.status === "invalid"
          ? `invalid: ${(c.gate_error ?? "").slice(0, 90)}`
          : (JSON.parse(c.changed ?? "[]") as string[]).join(", ") || "(seed)";
      lines.push(
        `  ${mark} ${c.id.padEnd(9)} ${c.status.padEnd(8)} ${formatScore(c.score).padStart(9)}  reward ${c.reward === null ? "   -" : c.reward.toFixed(2).padStart(5)}  ${c.commit_sha?.slice(0, 10) ?? "-".padEnd(10)}  ${what}`,
      );
      const d = decisions.get(c.id);
      if (d) lines.push(`      ${d.decision} by ${d.rule}: ${d.reason}`);
    }
  }
  lines.push("", "* = current incumbent (refs/heads/main), + = on its lineage");
  writeLines(lines);
}

export function registerLog(program: Command): void {
  program
    .command("log <run-dir>")
    .description(
      "a run's record: an optimize run's lineage with scores, rewards and decisions; a train run's epochs and solved matrix; an eval's tasks; a run's rollout",
    )
    .option("--json", "print as JSON")
    .action(async (dir: string, opts) => {
      const { db, repo } = await openRun(dir);
      const { runRow } = await import("../../store/db.ts");
      const { allCandidates } = await import("../../store/candidates.ts");
      const { rolloutSummaries } = await import("../../store/receipts.ts");
      const { evalLog, printEvalLog, printRunLog, printTrainLog, trainLog } = await import("./log-kinds.ts");
      await readRunRecords(dir, async () => {
        const kind = runRow(db)?.kind ?? "optimize";
        if (kind === "optimize") return await optimizeLog(db, repo, Boolean(opts.json));
        const gateErrors = new Map(allCandidates(db).map((c) => [c.id, c.status === "invalid" ? c.gate_error : null]));
        if (opts.json)
          return printJson(
            kind === "train"
              ? { kind, ...trainLog(db) }
              : kind === "eval"
                ? { kind, ...evalLog(db) }
                : { kind, rollouts: rolloutSummaries(db) },
          );
        writeLines(kind === "train" ? printTrainLog(db, gateErrors) : kind === "eval" ? printEvalLog(db) : printRunLog(db));
      }).finally(() => db.close());
    });

  program
    .command("diff <run-dir> <candidate> [other]")
    .description("what changed between a candidate and its parent, or between two candidates (ids like r01-k2, or commits)")
    .action(async (dir: string, a: string, b: string | undefined) => {
      const { db, repo } = await openRun(dir);
      const { candidateCommits } = await import("../../store/candidates.ts");
      const { isOid } = await import("../../store/git-safe.ts");
      const commitOf = (x: string) => {
        const row = candidateCommits(db, x);
        if (row) {
          if (!row.commit_sha) throw new HoneError("usage", `candidate ${x} was invalid and has no harness version`);
          for (const sha of [row.commit_sha, row.parent_commit].filter((v) => v !== null))
            if (!isOid(sha))
              throw new HoneError(
                "usage",
                `${join(dir, "hone.db")} records ${JSON.stringify(String(sha).slice(0, 80))} as a commit of candidate ${x}, which is no commit id; the run's records are damaged`,
              );
          return { commit: row.commit_sha, parent: row.parent_commit };
        }
        const sha = repo.resolve(x);
        if (!sha) throw new HoneError("usage", `no candidate or commit "${x}" in ${dir}; \`hone log ${dir}\` lists them`);
        return { commit: sha, parent: sha };
      };
      const { from, to } = await readRunRecords(dir, () => {
        const first = commitOf(a);
        return { from: b ? first.commit : first.parent, to: b ? commitOf(b).commit : first.commit };
      }).finally(() => db.close());
      if (from === to) {
        process.stdout.write("no differences (the seed harness has no parent)\n");
        return;
      }
      let diff: string;
      try {
        diff = repo.diff(from, to);
      } catch (err) {
        throw new HoneError(
          "usage",
          `${join(dir, "harnesses.git")} cannot diff ${from.slice(0, 10)} and ${to.slice(0, 10)}: ${(err as Error).message.split("\n").pop()}`,
        );
      }
      process.stdout.write(`${printableText(diff)}\n`);
    });
}
