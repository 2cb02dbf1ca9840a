// The cost of one sandboxed tool call and of one self-test, beside the same function called directly.

import type { ToolSpec } from "../src/harness/types.ts";
import { SandboxModule } from "../src/sandbox/isolate.ts";
import { selfTest, selfTestHost } from "../src/sandbox/self-test.ts";
import { median, ms, report } from "./lib.ts";

const SOURCE = `function run(ctx, args) {
  const lines = ctx.program.split("\\n");
  let total = 0;
  for (let i = 0; i < args.n; i++) total += lines[i % lines.length].length;
  return { lines: lines.length, total };
}`;

export async function benchSandbox(): Promise<void> {
  const host = selfTestHost();
  const direct = new Function("ctx", "args", `${SOURCE}\nreturn run(ctx, args);`) as (ctx: unknown, args: unknown) => unknown;
  const ctx = {
    get program() {
      return host.program();
    },
  };
  const module = new SandboxModule(SOURCE, "bench.js", undefined, host);
  const args = { n: 200 };
  await module.call("run", [args]);
  const sandboxed: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < 2000; i++) {
    let t = performance.now();
    await module.call("run", [args]);
    sandboxed.push(performance.now() - t);
    t = performance.now();
    JSON.parse(JSON.stringify(direct(ctx, args)));
    plain.push(performance.now() - t);
  }
  module.dispose();
  const tool: ToolSpec = {
    name: "bench_tool",
    description: "b",
    inputSchema: { type: "object", properties: { n: { type: "integer", minimum: 5 } }, required: ["n"] },
    kind: "custom",
    file: "bench.js",
    source: SOURCE,
  };
  const selfTests: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    const problems = await selfTest([tool], []);
    selfTests.push(performance.now() - t);
    if (problems.length) throw new Error(problems[0]?.message);
  }
  const s = median(sandboxed);
  const d = median(plain);
  report(
    "sandboxed tool call (issue 3)",
    [
      ["one sandboxed call, warm isolate (median of 2000)", ms(s)],
      ["the same function called directly (+ JSON copy)", ms(d)],
      ["ratio sandboxed / direct", `${(s / d).toFixed(1)}x`],
      ["one self-test: new isolate, compile, one call (median of 30)", ms(median(selfTests))],
    ],
    { ok: s < 2, text: "target: a sandboxed call under 2 ms median" },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSandbox();
