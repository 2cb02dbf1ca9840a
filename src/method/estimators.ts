import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { applySpec, SpecError } from "../harness/compile.ts";
import type { Harness } from "../harness/types.ts";
import type { ChatModel, ChatResponse } from "../model/types.ts";
import { LIFELINE_GRACE_SEC, runProcess } from "../task/python-process.ts";
import { type ProposerTask, proposeSample } from "./proposer.ts";

/** What an estimator gets: the incumbent package, an empty folder to write the candidate into, and the epoch. */
export interface ProposeContext {
  epoch: number;
  incumbentDir: string;
  candidateDir: string;
  /** A description of the training panel, for estimators that write text (never gold answers). */
  panelDescription: string;
  /** Called with every model response the estimator paid for (its proposer calls), so the run's records count them. */
  onResponses?: (responses: ChatResponse[]) => void;
}

/** Proposes one bounded change; returns a one-line summary, or undefined when it has nothing to propose. */
export interface Estimator {
  name: string;
  propose(ctx: ProposeContext): Promise<string | undefined>;
}

/** The environment for git run on a folder as files, not as part of a repository around it (or one GIT_DIR names). */
function plainGitEnv(dir: string): NodeJS.ProcessEnv {
  const { GIT_DIR: _d, GIT_WORK_TREE: _w, GIT_INDEX_FILE: _i, ...env } = process.env;
  return { ...env, GIT_CEILING_DIRECTORIES: dirname(resolve(dir)) };
}

/** Hand-written diffs (`git diff` format, paths relative to the package), applied in order: patch k at epoch k. */
export class PatchQueue implements Estimator {
  readonly name = "patch_queue";
  private next = 0;
  constructor(private readonly patches: string[]) {}
  async propose(ctx: ProposeContext): Promise<string | undefined> {
    // By epoch, not by call count, so a resumed run proposes what the uninterrupted run would.
    this.next = ctx.epoch;
    const patch = this.patches[ctx.epoch - 1];
    if (patch === undefined) return undefined;
    const text = patch.includes("\n") ? patch : readFileSync(patch, "utf8");
    try {
      // As a plain patch in the candidate's folder: inside a git work tree (runs/ in a user's project) git would read
      // the paths against that tree's top and skip, silently, every one outside the folder, which is all of them.
      execFileSync("git", ["apply", "--whitespace=nowarn", "-"], {
        cwd: ctx.candidateDir,
        input: text,
        stdio: ["pipe", "pipe", "pipe"],
        env: plainGitEnv(ctx.candidateDir),
      });
    } catch (err) {
      throw new SpecError(
        "patch",
        `patch ${this.next} does not apply: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`,
      );
    }
    return `patch ${this.next} of ${this.patches.length}`;
  }
}

/** The proposer model writes one HarnessSpec, compiled over the incumbent package. */
export class LLMEstimator implements Estimator {
  readonly name = "llm";
  constructor(
    private readonly model: ChatModel,
    private readonly proposer: Harness,
    private readonly loadIncumbent: (dir: string) => Harness,
    private readonly task: ProposerTask,
    private readonly seed = 0,
  ) {}
  async propose(ctx: ProposeContext): Promise<string | undefined> {
    const incumbent = this.loadIncumbent(ctx.incumbentDir);
    const slot = await proposeSample(
      this.model,
      this.proposer,
      {
        task: this.task,
        incumbent: { harness: incumbent, results: ctx.panelDescription },
        digest: `Epoch ${ctx.epoch}.`,
        round: ctx.epoch,
      },
      async (spec) => {
        try {
          applySpec(ctx.incumbentDir, spec, ctx.candidateDir);
          return [];
        } catch (err) {
          if (err instanceof SpecError) return [err.message];
          throw err;
        }
      },
      { seed: this.seed + ctx.epoch, trial: 0 },
    );
    ctx.onResponses?.(slot.responses); // paid for whether or not the proposal holds
    if (!slot.spec) throw new SpecError("proposal", slot.problems.join("; ") || "no proposal");
    return slot.spec.rationale ?? "one HarnessSpec";
  }
}

/** The longest wait a Node timer keeps (2^31 − 1 ms, 24.8 days): a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A coding agent you configure (a command line), run in the candidate's folder with HONE_EPOCH and
 * HONE_PANEL_DESCRIPTION in its environment; whatever it changes is the candidate.
 */
export class AgentCliEstimator implements Estimator {
  readonly name = "agent_cli";
  constructor(
    private readonly command: string,
    private readonly timeoutSec = 3600,
  ) {}
  async propose(ctx: ProposeContext): Promise<string | undefined> {
    // In a process group of its own, awaited: a timeout kills the agent with every process it started, hone answers a
    // stop meanwhile (which kills its descendants), and its lifeline kills them when hone itself is killed.
    const r = await runProcess("sh", ["-c", this.command], {
      cwd: ctx.candidateDir,
      env: { ...process.env, HONE_EPOCH: String(ctx.epoch), HONE_PANEL_DESCRIPTION: ctx.panelDescription },
      // A timeout past a timer's reach (estimator.timeout above 24.8 days) is as good as none, not one that fires at once.
      timeoutMs: Math.min(this.timeoutSec * 1000, MAX_TIMER_MS),
      lifeline: { graceSec: LIFELINE_GRACE_SEC },
    });
    if (r.timedOut)
      throw new SpecError(
        "agent",
        `the agent command ran past its timeout (${this.timeoutSec} s); it was killed with every process it started`,
      );
    if (r.code !== 0)
      throw new SpecError(
        "agent",
        `the agent command failed (${r.code === null ? `signal ${r.signal}` : `exit ${r.code}`}): ${(r.stderr || r.stdout || "").trim().slice(-400)}`,
      );
    return (r.stdout || "").trim().split("\n").slice(-1)[0] || "agent change";
  }
}
