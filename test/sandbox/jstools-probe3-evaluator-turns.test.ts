import { afterEach, describe, expect, it } from "vitest";
import { SandboxModule } from "../../src/sandbox/isolate.ts";
import { discoveryToolHost } from "../../src/sandbox/tool-host.ts";
import { attack, countedEnv, limits, modules } from "./attack-helpers.ts";

// A generated tool may ask for many evaluator runs at once (Promise.all over ctx.probe() or ctx.evaluate()). The
// agent's own tool calls never run more than one evaluation of a rollout at a time; a tool must not either, or one
// call starts dozens of evaluator processes at once (with --cold, or on a worker without the warm pool). Runs still
// waiting for their turn when the call is cut short (a limit, the rollout's deadline) never start.

afterEach(() => {
  for (const m of modules.splice(0)) m.dispose();
});

const fanOut = (n: number) =>
  `async function run(ctx) { const r = await Promise.all(Array.from({ length: ${n} }, (_, i) => (i % 2 ? ctx.probe() : ctx.evaluate()))); return [r.filter((x) => x.valid).length, r.filter((x) => x.error).length]; }`;

describe("evaluator runs a generated tool asks for", () => {
  it("Promise.all over 60 probes and evaluations runs one at a time, within the budget and the probe cap", async () => {
    const counted = countedEnv(20, 5);
    const a = await attack(fanOut(60), { counted, maxProbes: 12 });
    expect(a.result).toEqual({ ok: true, value: [32, 28] });
    expect(a.evaluator.peak).toBe(1);
    expect(a.evaluator.started).toBe(32);
    expect(a.env.used).toBe(20);
    expect(a.runningAtReturn).toBe(0);
  });

  it("unawaited evaluations of a call that returned still run, one at a time, and are charged", async () => {
    const counted = countedEnv(6, 5);
    const a = await attack("function run(ctx) { for (let i = 0; i < 10; i++) ctx.evaluate(); return 'fired'; }", { counted });
    expect(a.result).toEqual({ ok: true, value: "fired" });
    expect(a.evaluator.started).toBe(6);
    expect(a.evaluator.peak).toBe(1);
    expect(a.env.used).toBe(6);
  });

  it("a call stopped at its CPU limit leaves its queued probes unstarted and uncounted", async () => {
    // Each probe takes 3 s, far longer than the spin's 300 ms of CPU: the first is running when the limit passes.
    const counted = countedEnv(6, 3000);
    const a = await attack("function run(ctx) { for (let i = 0; i < 20; i++) ctx.probe(); for (;;) {} }", {
      counted,
      maxProbes: 40,
    });
    expect(a.result).toMatchObject({ ok: false, kind: "timeout" });
    expect(a.evaluator.started).toBeLessThanOrEqual(2);
    expect(a.runningAtReturn).toBe(0);
    expect(a.trajectory.events.filter((e) => e.type === "probe").length).toBe(a.evaluator.started);
  });

  it("dropped runs are given back: the probe cap and the budget count only runs that started", async () => {
    const counted = countedEnv(2, 5);
    const host = discoveryToolHost(
      counted.env,
      { id: "t", description: "d", metric: "combined_score", direction: "maximize", reference: null },
      counted.trajectory,
      2,
    );
    const first = [host.probe(), host.probe(), host.evaluate(), host.evaluate()];
    expect(await host.probe()).toContain("probe limit (2 per rollout) reached");
    expect(await host.evaluate()).toContain("budget (2 calls) is spent");
    host.dropWaiting?.();
    const answers = (await Promise.all(first)).map((j) => JSON.parse(j) as { valid?: boolean; error?: string });
    expect(answers[0]).toEqual({ valid: true, reason: null });
    expect(answers.slice(1).every((x) => x.error?.includes("dropped before it started"))).toBe(true);
    // One probe started; the other probe and both evaluations were given back.
    expect(JSON.parse(await host.probe())).toEqual({ valid: true, reason: null });
    expect(JSON.parse(await host.evaluate())).toMatchObject({ valid: true, evaluations_used: 1 });
    expect(JSON.parse(await host.evaluate())).toMatchObject({ valid: true, evaluations_used: 2 });
    expect(counted.evaluator.started).toBe(4);
  });

  it("the rollout's deadline drops queued evaluations: they are neither run nor charged", async () => {
    const deadline = new AbortController();
    // The deadline passes as the second evaluation starts (the evaluator's own start hook, no timer): all 30 were
    // asked for by then, and only the one running finishes.
    const counted = countedEnv(30, 40, (started) => {
      if (started === 2) deadline.abort();
    });
    const host = discoveryToolHost(
      counted.env,
      { id: "t", description: "d", metric: "combined_score", direction: "maximize", reference: null },
      counted.trajectory,
      4,
    );
    const module = new SandboxModule(fanOut(30).replace("i % 2 ? ctx.probe() : ", ""), "custom_tools/fan.js", limits, host, 1);
    modules.push(module);
    const r = await module.call("run", [{}], deadline.signal);
    expect(r).toEqual({ ok: false, kind: "timeout", error: "stopped at the rollout's time limit" });
    expect(counted.evaluator.running).toBe(0);
    expect(counted.evaluator.started).toBe(2);
    expect(counted.env.used).toBe(2);
  });
});
