// hone's public TypeScript API.
export { ExitCode, HoneError } from "./errors.ts";
export { loadHarness } from "./harness/package.ts";
export type { Harness } from "./harness/types.ts";
export { DEFAULT_HARNESS, type RunHarnessOptions, type RunHarnessResult, runHarness } from "./loop/run.ts";
export { checkEndpoint } from "./model/check.ts";
export { startOfflineServer } from "./model/offline/server.ts";
export { resolveModel } from "./model/resolve.ts";
export type { ChatModel, ChatRequest, ChatResponse } from "./model/types.ts";
export { listBuiltinTasks, resolveTask } from "./task/builtin.ts";
export { type DiscoveryTask, loadTaskFolder } from "./task/discovery-task.ts";
export { evaluateProgram } from "./task/evaluator.ts";
