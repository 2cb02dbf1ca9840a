import { createHash } from "node:crypto";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { type Evaluation, isBetter } from "../task/evaluation.ts";
import { applySearchReplace, EditError, findRegions, hasEvolveMarkers, replaceBlock } from "../task/evolve-block.ts";
import { type Environment, type ToolOutcome, toolError } from "./environment.ts";

export type Evaluate = (program: string) => Promise<Evaluation>;

export interface EvaluationRecord {
  index: number;
  program: string;
  programSha: string;
  evaluation: Evaluation;
  improved: boolean;
}

export interface DiscoveryEnvOptions {
  task: Pick<DiscoveryTask, "metric" | "direction" | "showArtifacts">;
  startProgram: string;
  /** The starting program's evaluation, if known; it is never charged to the budget. */
  startEvaluation?: Evaluation;
  maxEvals: number;
  evaluate: Evaluate;
  onEvaluation?: (record: EvaluationRecord) => void;
  /** Cap on the artifacts text shown to the executor per evaluation. */
  artifactChars?: number;
}

/** How a program with no EVOLVE-BLOCK markers (an OpenEvolve seed may have none) is described to the executor. */
export const WHOLE_PROGRAM_EDITABLE =
  "it has no EVOLVE-BLOCK markers, so the whole program is editable (edit_program's block replaces all of it)";

/** Artifacts hone does not show by name: the evaluator's stdout, tracebacks (they quote the evaluator's source). */
const UNSHOWN_ARTIFACT = /^(?:stdout|stderr|feedback|traceback|.*_traceback)$/;

/**
 * The evaluator's own named artifacts (an EvaluationResult's `packing_summary`, a cascade's `stage2_stderr`), each
 * as `name: value`, in the order it gave them: OpenEvolve puts every artifact into the next prompt.
 */
function namedArtifacts(artifacts: Evaluation["artifacts"]): string[] {
  return Object.entries(artifacts)
    .filter(([k, v]) => !UNSHOWN_ARTIFACT.test(k) && v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
}

/**
 * Metrics whose values are lists or objects (k_module_problem returns its hints as an `artifacts` dict among its
 * metrics), which the metrics shown leave out: OpenEvolve's prompt lists them with the rest.
 */
function structuredMetrics(metrics: Evaluation["metrics"]): string[] {
  return Object.entries(metrics)
    .filter(([, v]) => typeof v === "object" && v !== null && !("__nonfinite__" in v))
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
}

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The program under search, the evaluator budget and the best valid result: the state behind the fixed tools. */
export class DiscoveryEnvironment implements Environment {
  program: string;
  readonly startProgram: string;
  readonly records: EvaluationRecord[] = [];
  best: { program: string; score: number; index: number } | undefined;
  private finished = false;
  private readonly opts: DiscoveryEnvOptions;

  constructor(opts: DiscoveryEnvOptions) {
    this.opts = opts;
    this.program = opts.startProgram;
    this.startProgram = opts.startProgram;
    const s = opts.startEvaluation;
    if (s?.valid && s.score !== undefined) this.best = { program: opts.startProgram, score: s.score, index: 0 };
  }

  get used(): number {
    return this.records.length;
  }
  get left(): number {
    return Math.max(0, this.opts.maxEvals - this.used);
  }
  get total(): number {
    return this.opts.maxEvals;
  }
  get direction() {
    return this.opts.task.direction;
  }

  implements(tool: string): boolean {
    return ["view_program", "edit_program", "evaluate_program", "finish"].includes(tool);
  }

  exhausted(): boolean {
    return this.finished || this.left === 0;
  }

  /** Puts the best program back as the current one (stall restart). Returns false when there is nothing to revert to. */
  revertToBest(): boolean {
    if (!this.best || this.best.program === this.program) return false;
    this.program = this.best.program;
    return true;
  }

  async call(tool: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    switch (tool) {
      case "view_program":
        return { output: this.view() };
      case "edit_program":
        return this.edit(args);
      case "evaluate_program":
        return this.evaluate();
      case "finish":
        this.finished = true;
        return { output: "Finished. The best valid program is kept.", stop: true };
      default:
        return toolError(`unknown tool ${tool}`);
    }
  }

  /** The whole program and where its editable region is, for view_program and for generated tools. */
  view(): string {
    const lines = this.program.split("\n").length;
    if (!hasEvolveMarkers(this.program)) return `Current program (${lines} lines; ${WHOLE_PROGRAM_EDITABLE}):\n\n${this.program}`;
    const r = findRegions(this.program);
    const where = r.map((x) => `lines ${x.startLine}-${x.endLine}`).join(", ");
    return `Current program (${lines} lines; editable region: ${where}, between the EVOLVE-BLOCK markers):\n\n${this.program}`;
  }

  /** Applies an edit under the EVOLVE-block rules without touching the program; throws EditError. */
  applyEdit(args: Record<string, unknown>): string {
    if (typeof args.code === "string" && args.edits === undefined && args.block === undefined) return this.applyCode(args.code);
    const { edits, block } = args;
    if (typeof edits === "string" && typeof block === "string") throw new EditError("pass either edits or block, not both");
    if (typeof block === "string") {
      const index = typeof args.block_index === "number" ? args.block_index : 0;
      return replaceBlock(this.program, block, index);
    }
    if (typeof edits === "string") return applySearchReplace(this.program, edits);
    throw new EditError("pass edits (SEARCH/REPLACE blocks) or block (the whole new EVOLVE block) as a string");
  }

  /**
   * HarnessTTT's one-string edit (edit_solution(code), ctx.stage_edit(code)): SEARCH/REPLACE blocks when it has
   * any, otherwise the whole new EVOLVE block, a ``` fence and the marker lines around it optional.
   */
  private applyCode(code: string): string {
    if (code.includes("<<<<<<< SEARCH")) return applySearchReplace(this.program, code);
    let body = code.trim();
    const fence = /^```[\w-]*\n([\s\S]*?)\n?```$/.exec(body);
    if (fence) body = fence[1] ?? "";
    const start = body.indexOf("# EVOLVE-BLOCK-START");
    const end = body.lastIndexOf("# EVOLVE-BLOCK-END");
    if (start >= 0 && end > start) body = body.slice(body.indexOf("\n", start) + 1, end);
    return replaceBlock(this.program, body, 0);
  }

  private edit(args: Record<string, unknown>): ToolOutcome {
    try {
      const next = this.applyEdit(args);
      if (next === this.program) return { output: "The edit changed nothing; the program is as it was." };
      this.program = next;
      return { output: `Edit applied. The program now has ${next.split("\n").length} lines. Evaluate it to see its score.` };
    } catch (err) {
      if (err instanceof EditError) return toolError(err.message);
      throw err;
    }
  }

  /** Evaluates the current program without charging the budget or touching the best; generated tools' probe(). */
  async probe(): Promise<Evaluation> {
    return this.opts.evaluate(this.program);
  }

  /** Charges one evaluation and returns the JSON the executor sees. */
  async evaluateCurrent(): Promise<{ record: EvaluationRecord; summary: Record<string, unknown> } | undefined> {
    if (this.left === 0) return undefined;
    const program = this.program;
    const evaluation = await this.opts.evaluate(program);
    const improved =
      evaluation.valid && evaluation.score !== undefined && isBetter(evaluation.score, this.best?.score, this.direction);
    const record: EvaluationRecord = { index: this.used + 1, program, programSha: sha256(program), evaluation, improved };
    this.records.push(record);
    if (improved && evaluation.score !== undefined) this.best = { program, score: evaluation.score, index: record.index };
    this.opts.onEvaluation?.(record);
    return { record, summary: this.summary(record) };
  }

  private async evaluate(): Promise<ToolOutcome> {
    const done = await this.evaluateCurrent();
    if (!done) return toolError(`the evaluator budget (${this.total} calls) is spent; call finish`);
    return { output: JSON.stringify(done.summary, null, 1) };
  }

  private summary(r: EvaluationRecord): Record<string, unknown> {
    const e = r.evaluation;
    const out: Record<string, unknown> = {
      valid: e.valid,
      score: e.valid ? e.score : null,
      metric: this.opts.task.metric,
      direction: this.direction,
      improved: r.improved,
      best_score: this.best?.score ?? null,
      evaluations_used: this.used,
      evaluations_left: this.left,
    };
    if (!e.valid) out.reason = e.reason;
    const shown = Object.fromEntries(
      Object.entries(e.metrics).filter(([k, v]) => k !== this.opts.task.metric && (typeof v !== "object" || v === null)),
    );
    if (Object.keys(shown).length > 0) out.metrics = shown;
    const named = this.opts.task.showArtifacts === false ? [] : [...namedArtifacts(e.artifacts), ...structuredMetrics(e.metrics)];
    const feedback = [e.artifacts.feedback, ...named, e.artifacts.stderr]
      .filter((x): x is string => typeof x === "string" && x.length > 0)
      .join("\n");
    if (feedback) {
      const cap = this.opts.artifactChars ?? 2000;
      out.feedback = feedback.length > cap ? `${feedback.slice(0, cap / 2)}\n[...]\n${feedback.slice(-cap / 2)}` : feedback;
    }
    return out;
  }
}
