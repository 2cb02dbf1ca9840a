import { calculate } from "./calculator.ts";
import { type Environment, type ToolOutcome, toolError } from "./environment.ts";

/**
 * The task side of a QA rollout: a calculator, `final_answer` (ends the rollout with the answer text), and for the
 * oracle harness only, `oracle_answer`, which submits the gold answer in the benchmark's format without showing it
 * to the model. The gold lives here and in the scorer, nowhere else.
 */
export class QAEnvironment implements Environment {
  answer: string | undefined;
  calculations = 0;
  constructor(private readonly goldAsAnswer: () => string) {}

  implements(tool: string): boolean {
    return tool === "calculator" || tool === "final_answer" || tool === "oracle_answer";
  }

  exhausted(): boolean {
    return this.answer !== undefined;
  }

  async call(tool: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    if (tool === "calculator") {
      if (typeof args.expression !== "string") return toolError('pass expression as a string, like "(3 + 4) * 2"');
      try {
        this.calculations++;
        const v = calculate(args.expression);
        return { output: String(Number(v.toPrecision(15))) };
      } catch (err) {
        return toolError((err as Error).message);
      }
    }
    if (tool === "final_answer") {
      if (typeof args.answer !== "string" || args.answer.trim() === "") return toolError("pass answer as a non-empty string");
      this.answer = args.answer;
      return { output: "Answer recorded.", stop: true };
    }
    if (tool === "oracle_answer") {
      this.answer = this.goldAsAnswer();
      return { output: "Answer recorded.", stop: true };
    }
    return toolError(`unknown tool ${tool}`);
  }
}
