import { afterEach, describe, expect, it } from "vitest";
import { SandboxModule } from "../../src/sandbox/isolate.ts";
import { selfTestHost } from "../../src/sandbox/self-test.ts";
import { attack, errorOf, limits, modules } from "./attack-helpers.ts";

// Some built-ins run long stretches of native code that V8 does not interrupt: indexOf over a holey array of length
// 2^32-1 scans ~10^8 slots in ~3 s, and the CPU limit's termination request is lost inside it, so a loop of them is
// not stopped between them either. The wall clock must not wait for the isolate's thread: the call fails at the
// limit, the module's next call does not pile a second stuck thread on the first, and the module works again once
// the stuck one has ended. (Each scan here is bounded, so the abandoned thread ends within seconds.)

afterEach(() => {
  for (const m of modules.splice(0)) m.dispose();
});

const SCANS = "const a = []; a.length = 4294967295; let n = 0; for (let i = 0; i < 3; i++) n += a.indexOf(2, 4294967295 - 1e8);";

describe("native code the isolate cannot interrupt", () => {
  it("a loop of long native scans fails at the wall clock; the host's event loop keeps running", async () => {
    const started = performance.now();
    const a = await attack(`function run(ctx) { ${SCANS} return n; }`);
    const took = performance.now() - started;
    expect(a.result.ok).toBe(false);
    expect(errorOf(a.result)).toMatch(/wall clock|CPU time/);
    expect(took).toBeLessThan(limits.wallMs + 800);
    expect(a.ticks).toBeGreaterThan(50);
  }, 30_000);

  it("while the abandoned isolate is stuck, the next call fails at once; after it ended, the module runs again", async () => {
    const module = new SandboxModule(
      `function run(ctx, args) { if (args.slow) { ${SCANS} } return "ok"; }`,
      "custom_tools/stall.js",
      limits,
      selfTestHost(),
      1,
    );
    modules.push(module);
    const first = await module.call("run", [{ slow: true }]);
    expect(first.ok).toBe(false);
    const t = performance.now();
    const second = await module.call("run", [{ slow: false }]);
    expect(performance.now() - t).toBeLessThan(limits.wallMs + 800);
    expect(second.ok).toBe(false);
    expect(errorOf(second)).toMatch(/not run: an earlier call of this module/);
    // The stuck scans end on their own within seconds; then a fresh isolate answers.
    let third = await module.call("run", [{ slow: false }]);
    for (let i = 0; i < 20 && !third.ok; i++) third = await module.call("run", [{ slow: false }]);
    expect(third).toEqual({ ok: true, value: "ok" });
  }, 60_000);

  it("a long native scan in the module's top level fails the load at the wall clock", async () => {
    const module = new SandboxModule(
      `${SCANS}\nfunction run(ctx) { return n; }`,
      "custom_tools/stall.js",
      limits,
      selfTestHost(),
      1,
    );
    modules.push(module);
    const t = performance.now();
    const r = await module.call("run", [{}]);
    expect(performance.now() - t).toBeLessThan(limits.wallMs + 800);
    expect(r.ok).toBe(false);
  }, 30_000);

  it("an aborted signal (the rollout's deadline) ends a call that hangs, long before its own wall clock", async () => {
    const module = new SandboxModule(
      "async function run(ctx) { await new Promise(() => {}); }",
      "custom_tools/hang.js",
      { ...limits, wallMs: 20_000 },
      selfTestHost(),
      1,
    );
    modules.push(module);
    const t = performance.now();
    const r = await module.call("run", [{}], AbortSignal.timeout(300));
    expect(performance.now() - t).toBeLessThan(2000);
    expect(r).toEqual({ ok: false, kind: "timeout", error: "stopped at the rollout's time limit" });
    const aborted = AbortSignal.abort();
    expect(await module.call("run", [{}], aborted)).toEqual(r);
  });
});
