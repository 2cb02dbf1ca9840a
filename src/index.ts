// hone's public TypeScript API.

export { type ConsoleOptions, startConsole } from "./console/server.ts";
export { ExitCode, HoneError } from "./errors.ts";
export { loadHarness } from "./harness/package.ts";
export type { Harness } from "./harness/types.ts";
export { type EvalOptions, type EvalSummary, evaluateBenchmark, type TaskResult } from "./loop/eval.ts";
export {
  DEFAULT_PROPOSER_HARNESS,
  type OptimizeEvent,
  type OptimizeOptions,
  type OptimizeResult,
  type OptimizeSettings,
  optimize,
} from "./loop/optimize.ts";
export { LocalQARunner, type QAJob, type QAJobResult, type QARunner } from "./loop/qa-runner.ts";
export { runReceipt } from "./loop/receipt.ts";
export { DEFAULT_HARNESS, type RunHarnessOptions, type RunHarnessResult, runHarness } from "./loop/run.ts";
export { LocalRunner, type RolloutJob, type RolloutJobResult, type Runner } from "./loop/runner.ts";
export { GreedyMonotonic, Loss, Trainer, type TrainerOptions, TrainingMisuse } from "./loop/train.ts";
export {
  type Criterion,
  InvalidFirstAttempts,
  MeanWithConfidence,
  type Measurement,
  StepsUsed,
  StrictPareto,
  TokensUsed,
  type Verdict,
} from "./method/criteria.ts";
export { AgentCliEstimator, type Estimator, LLMEstimator, PatchQueue } from "./method/estimators.ts";
export { checkEndpoint } from "./model/check.ts";
export { startOfflineServer } from "./model/offline/server.ts";
export { resolveModel } from "./model/resolve.ts";
export type { ChatModel, ChatRequest, ChatResponse } from "./model/types.ts";
export { listBuiltinTasks, resolveTask } from "./task/builtin.ts";
export { type DiscoveryTask, loadTaskFolder } from "./task/discovery-task.ts";
export { evaluateProgram } from "./task/evaluator.ts";
export { type Gold, scoreAnswer } from "./task/qa/score-answer.ts";
