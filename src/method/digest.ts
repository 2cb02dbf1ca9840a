import { type Db, roundRows } from "../store/db.ts";

interface Row {
  round: number;
  slot: number;
  status: string;
  changed: string | null;
  reward: number | null;
  score: number | null;
  gate_error: string | null;
  spec: string | null;
}

/**
 * A changed field's label as a digest line shows it: a text value (budget_reminder's message, up to 2000 characters)
 * is cut, so a few such specs cannot fill the budget and push the worst specs and the refusals out.
 */
const LABEL_CHARS = 120;
const label = (s: string) =>
  s.length > LABEL_CHARS ? `${s.slice(0, LABEL_CHARS).replace(/\s+/g, " ")}… (${s.length} characters)` : s.replace(/\s+/g, " ");

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? "-" : Number(x.toPrecision(6)).toString());

/**
 * The proposer's experience digest (`context` learning): which spec changes went with which rewards, the best and
 * worst specs so far, gate failures and why, and how the incumbent moved, kept within a token budget (4
 * characters a token). The best spec is also given as JSON on one line, so it can be built on directly.
 *
 * A reward is normalised by the gap to the task's reference value, so from two rewards and their scores the
 * reference could be solved for: where the proposer may not see the reference (`showRewards: false`), the digest
 * ranks by reward but shows scores only.
 */
export function experienceDigest(
  db: Db,
  runId: string,
  opts: { tokenBudget: number; metric: string; direction: string; showRewards?: boolean },
): string {
  const rows = db
    .prepare(
      "SELECT round, slot, status, changed, reward, score, gate_error, spec FROM candidates WHERE run_id = ? AND round > 0 ORDER BY round, slot",
    )
    .all(runId) as Row[];
  const rounds = roundRows(db, runId);
  if (rows.length === 0 && rounds.length <= 1) return "No experience yet: this is the first round of proposals.";
  const scored = rows.filter((r) => r.reward !== null && r.status !== "invalid");
  const byReward = [...scored].sort((a, b) => (b.reward as number) - (a.reward as number));
  const reward = (r: Row) => (opts.showRewards === false ? "" : `reward ${fmt(r.reward)}, `);
  const line = (r: Row) =>
    `- r${r.round}#${r.slot} ${reward(r)}${opts.metric} ${fmt(r.score)}: ${(JSON.parse(r.changed ?? "[]") as string[]).map(label).join(", ") || "(nothing)"}`;
  const sections: string[][] = [];
  sections.push([
    `Incumbent ${opts.metric} by round (${opts.direction}): ${rounds.map((r) => `r${r.round} ${fmt(r.incumbent_score)}${r.moved ? "*" : ""}`).join(" → ")} (* = the incumbent moved)`,
  ]);
  const budget = opts.tokenBudget * 4;
  const best = byReward[0];
  // The best spec's JSON (a whole system prompt, tools' code) may be most of the budget by itself: it is shown only
  // when it leaves half the budget to the rest, which it would otherwise push out.
  if (best?.spec)
    sections.push([
      best.spec.length <= budget / 2
        ? `best_spec_json: ${best.spec}`
        : `best_spec_json: (r${best.round}#${best.slot}'s JSON, ${best.spec.length} characters, is left out: over half the digest's budget)`,
    ]);
  sections.push(["Best specs so far:", ...byReward.slice(0, 5).map(line)]);
  sections.push(["Worst specs so far:", ...byReward.slice(-3).reverse().map(line)]);
  const failures = rows.filter((r) => r.status === "invalid" || r.status === "repaired");
  if (failures.length)
    sections.push([
      "Rejected or repaired proposals and why:",
      ...failures.slice(-6).map((r) => `- r${r.round}#${r.slot} ${r.status}: ${(r.gate_error ?? "").slice(0, 300)}`),
    ]);
  const out: string[] = [];
  let used = 0;
  for (const s of sections) {
    for (const l of s) {
      if (used + l.length + 1 > budget) return [...out, "(digest cut to its token budget)"].join("\n");
      out.push(l);
      used += l.length + 1;
    }
  }
  return [...out, ...latestChanges(rows.map(line), budget - used)].join("\n");
}

/** "All changes tried" within what is left of the budget: the latest changes, the earliest cut first. */
function latestChanges(lines: string[], left: number): string[] {
  const head = "All changes tried, in order:";
  const kept: string[] = [];
  let used = head.length + 1;
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i] as string;
    const note = i > 0 ? 60 : 0; // room for the line saying how many earlier ones were cut
    if (used + l.length + 1 + note > left) {
      const cut = `(${i + 1} earlier change${i ? "s" : ""} cut to the digest's token budget)`;
      return used + cut.length + 1 <= left ? [head, cut, ...kept] : [];
    }
    kept.unshift(l);
    used += l.length + 1;
  }
  return [head, ...kept];
}
