import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { type CallResult, type SandboxLimits, SandboxModule } from "../../src/sandbox/isolate.ts";
import { discoveryToolHost } from "../../src/sandbox/tool-host.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";

// Shared by the adversarial suites: a discovery environment whose evaluator counts what it was asked to do, and a
// runner that calls a tool in its own isolate (the gate bypassed on purpose, to prove the isolate holds alone)
// while a host timer counts event-loop ticks: if the host's loop were blocked during the attack, it could not tick.

export const limits: SandboxLimits = { memoryMb: 32, cpuMs: 300, wallMs: 1500, maxResultChars: 50_000 };
export const PROGRAM = "import math\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\nprint(X)\n";

export interface Counted {
  env: DiscoveryEnvironment;
  /** Evaluator calls started and how many are still running. */
  evaluator: { started: number; running: number; peak: number };
  trajectory: MemoryTrajectory;
}

/** An environment whose evaluator counts its runs; `onStart` is called (synchronously) as each run starts. */
export function countedEnv(maxEvals = 6, evalDelayMs = 5, onStart?: (started: number) => void): Counted {
  const evaluator = { started: 0, running: 0, peak: 0 };
  const env = new DiscoveryEnvironment({
    task: { metric: "combined_score", direction: "maximize" },
    startProgram: PROGRAM,
    maxEvals,
    evaluate: async () => {
      evaluator.started++;
      evaluator.running++;
      evaluator.peak = Math.max(evaluator.peak, evaluator.running);
      onStart?.(evaluator.started);
      await new Promise((r) => setTimeout(r, evalDelayMs));
      evaluator.running--;
      return { valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 };
    },
  });
  return { env, evaluator, trajectory: new MemoryTrajectory() };
}

export interface Attack extends Counted {
  result: CallResult;
  /** The result of a second, harmless call on the same module (after the attack). */
  after?: CallResult;
  /** Host timer ticks (every 5 ms) counted while the attack ran. */
  ticks: number;
  /** Evaluator calls still running when the call returned. */
  runningAtReturn: number;
  module: SandboxModule;
}

export const modules: SandboxModule[] = [];

/** Calls `run` of a tool module once (and, with `second`, a second time with those arguments). */
export async function attack(
  source: string,
  opts: { counted?: Counted; maxProbes?: number; args?: unknown; second?: unknown; limits?: SandboxLimits } = {},
): Promise<Attack> {
  const counted = opts.counted ?? countedEnv();
  const host = discoveryToolHost(
    counted.env,
    { id: "t", description: "d", metric: "combined_score", direction: "maximize", reference: null },
    counted.trajectory,
    opts.maxProbes ?? 4,
  );
  const module = new SandboxModule(source, "custom_tools/attack.js", opts.limits ?? limits, host, 1);
  modules.push(module);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  try {
    const result = await module.call("run", [opts.args ?? {}]);
    const runningAtReturn = counted.evaluator.running;
    const seen = ticks;
    const after = opts.second === undefined ? undefined : await module.call("run", [opts.second]);
    return { ...counted, result, after, ticks: seen, runningAtReturn, module };
  } finally {
    clearInterval(timer);
  }
}

export const errorOf = (r: CallResult): string => (r.ok ? "" : r.error);
