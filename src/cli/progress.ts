import type { OptimizeEvent } from "../loop/optimize.ts";
import { describeNoise } from "../measure/noise.ts";
import { formatScore } from "./output.ts";

/**
 * Live view of an optimize run: on a terminal one status line redrawn in place (round, candidates in flight,
 * evaluations used, best score so far) with finished rounds printed above it; elsewhere plain lines.
 */
export class OptimizeProgress {
  private round = 0;
  private inFlight = new Set<string>();
  private evals = 0;
  private best: number | null = null;
  private lastLine = "";
  constructor(
    private readonly tty: boolean,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {}

  private status(): string {
    return `round ${this.round} · ${this.inFlight.size} rollout(s) in flight · ${this.evals} evaluations · best ${formatScore(this.best)}`;
  }

  private print(line: string): void {
    if (this.tty) this.out.write(`\r\x1b[2K${line}\n${this.status()}`);
    else this.out.write(`${line}\n`);
  }

  private refresh(): void {
    if (!this.tty) return;
    const s = this.status();
    if (s !== this.lastLine) this.out.write(`\r\x1b[2K${s}`);
    this.lastLine = s;
  }

  on(e: OptimizeEvent): void {
    switch (e.type) {
      case "start":
        this.print(`${e.resumed ? "resuming" : "optimizing"} ${e.task} for ${e.rounds} round(s) in ${e.runDir}`);
        break;
      case "notice":
        this.print(e.text);
        break;
      case "round_start":
        this.round = e.round;
        if (e.incumbentScore !== null && this.best === null) this.best = e.incumbentScore;
        this.print(
          `round ${e.round}: incumbent ${formatScore(e.incumbentScore)}${e.round === 0 ? " (seed program; rolling out the seed harness)" : ""}`,
        );
        break;
      case "noise":
        this.print(`  noise: ${describeNoise(e.noise)}`);
        break;
      case "proposals":
        this.print(`  proposals: ${e.valid} valid, ${e.repaired} repaired, ${e.invalid} invalid`);
        break;
      case "rollout_event":
        if (e.event.type === "rollout_start") this.inFlight.add(e.job);
        if (e.event.type === "evaluation") this.evals++;
        this.refresh();
        break;
      case "rollout_done":
        this.inFlight.delete(e.job);
        this.print(`  ${e.job}: ${e.error ? `failed: ${e.error}` : `best ${formatScore(e.score)}`}`);
        break;
      case "round_end":
        if (e.incumbentScore !== null) this.best = e.incumbentScore;
        this.print(
          `round ${e.round} done: incumbent ${formatScore(e.incumbentScore)}${e.moved ? " (moved)" : ""}${e.rewards.length ? `; rewards ${e.rewards.map((r) => (r === null ? "-" : r.toFixed(2))).join(" ")}` : ""}`,
        );
        break;
    }
  }

  end(): void {
    if (this.tty) this.out.write("\r\x1b[2K");
  }
}
