// The cost of one sandboxed tool call and of one self-test, beside the same function called directly.

import type { ToolSpec } from "../src/harness/types.ts";
import { SandboxModule } from "../src/sandbox/isolate.ts";
import { selfTest, selfTestHost } from "../src/sandbox/self-test.ts";
import { median, ms, report, spread } from "./lib.ts";

const REPS = Number(process.env.BENCH_REPS ?? 5);
const CALLS = 400;

const SOURCE = `function run(ctx, args) {
  const lines = ctx.program.split("\\n");
  let total = 0;
  for (let i = 0; i < args.n; i++) total += lines[i % lines.length].length;
  return { lines: lines.length, total };
}`;

export async function benchSandbox(): Promise<boolean> {
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
  // Per repetition: the median of CALLS sandboxed calls and of as many direct ones, interleaved.
  const sandboxed: number[] = [];
  const plain: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const s: number[] = [];
    const d: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      let t = performance.now();
      await module.call("run", [args]);
      s.push(performance.now() - t);
      t = performance.now();
      JSON.parse(JSON.stringify(direct(ctx, args)));
      d.push(performance.now() - t);
    }
    sandboxed.push(median(s));
    plain.push(median(d));
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
  return report(
    `sandboxed tool call (issue 3): ${REPS} repetitions of ${CALLS} calls each way, interleaved`,
    [
      ["one sandboxed call, warm isolate (median per repetition)", spread(sandboxed, " ms", 3)],
      ["the same function called directly (+ JSON copy)", spread(plain, " ms", 3)],
      [
        "ratio sandboxed / direct",
        spread(
          sandboxed.map((x, i) => x / (plain[i] as number)),
          "x",
          1,
        ),
      ],
      ["one self-test: new isolate, compile, one call (median of 30)", ms(median(selfTests))],
    ],
    [{ goal: { figure: "one sandboxed call, warm isolate", op: "<=", value: 2, unit: " ms" }, samples: sandboxed }],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSandbox();
