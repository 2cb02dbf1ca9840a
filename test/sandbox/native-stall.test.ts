import { afterEach, describe, expect, it } from "vitest";
import { abandonedRunning, MAX_ABANDONED, SandboxModule } from "../../src/sandbox/isolate.ts";
import { selfTestHost } from "../../src/sandbox/self-test.ts";
import { attack, errorOf, limits, modules } from "./attack-helpers.ts";

// Some built-ins run long stretches of native code that V8 does not interrupt: indexOf over a holey array of length
// 2^32-1 scans ~10^8 slots in ~3 s, and the CPU limit's termination request is lost inside it, so a loop of them is
// not stopped between them either. The wall clock must not wait for the isolate's thread: the call fails at the
// limit, the module's next call does not pile a second stuck thread on the first, and the module works again once
// the stuck one has ended. (Each scan here is bounded, so the abandoned thread ends within seconds.)

// Each test leaves no stuck thread to the next: the process allows only so many at once (one per core).
afterEach(async () => {
  for (const m of modules.splice(0)) m.dispose();
  for (let i = 0; i < 240 && abandonedRunning() > 0; i++) await new Promise((r) => setTimeout(r, 250));
}, 90_000);

// Each scan covers 4·10^8 slots (~4 s on the machine these tests were written on; a 4x faster one still takes three
// scans well past the 1.5 s wall clock).
const SCANS = "const a = []; a.length = 4294967295; let n = 0; for (let i = 0; i < 3; i++) n += a.indexOf(2, 4294967295 - 4e8);";

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
    for (let i = 0; i < 90 && !third.ok; i++) third = await module.call("run", [{ slow: false }]);
    expect(third).toEqual({ ok: true, value: "ok" });
  }, 120_000);

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

  it("abandoned isolates never pile up past one per core in the process: later generated code fails at once", async () => {
    // Each rollout builds its own modules, so one stuck thread per module is no bound; the process's is.
    const stuck = Array.from(
      { length: MAX_ABANDONED + 1 },
      (_, i) => new SandboxModule(`function run() { ${SCANS} return n; }`, `middlewares/m${i}.js`, limits, selfTestHost(), 1),
    );
    modules.push(...stuck);
    const results = [];
    for (const m of stuck) {
      const t = performance.now();
      results.push({ r: await m.call("run", [{}]), ms: performance.now() - t });
      m.dispose(); // the rollout ends: its modules go, their stuck threads do not
    }
    expect(abandonedRunning()).toBeLessThanOrEqual(MAX_ABANDONED);
    const last = results.at(-1);
    expect(last?.r.ok).toBe(false);
    expect(errorOf(last?.r as never)).toMatch(/not run: \d+ earlier calls of generated code .* one per core/);
    expect(last?.ms).toBeLessThan(limits.wallMs);
  }, 120_000);
});
