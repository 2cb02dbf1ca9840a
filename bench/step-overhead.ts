// hone's own overhead per agent step (model call through the client, tool dispatch, middleware, trajectory write)
// against a zero-latency loopback model, beside one bare HTTP round trip to the same server.

import { mkdtempSync, rmSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadHarness } from "../src/harness/package.ts";
import { OpenAICompatibleModel } from "../src/model/openai-compatible.ts";
import { withRetries } from "../src/model/retry.ts";
import { runAgentLoop } from "../src/runtime/agent-loop.ts";
import { DiscoveryEnvironment } from "../src/runtime/discovery-env.ts";
import { toToolDefinition } from "../src/runtime/environment.ts";
import { builtinMiddlewares } from "../src/runtime/middlewares/index.ts";
import { JsonlTrajectory } from "../src/store/trajectory.ts";
import { median, ms, report } from "./lib.ts";

const STEPS_PER_ROLLOUT = 20;
const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 40);

const answer = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "bench",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "view_program", arguments: "{}" } }],
      },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 },
});

export async function benchStepOverhead(): Promise<void> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (bodies.length < 200) bodies.push(Buffer.concat(chunks).toString());
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const harness = loadHarness(join(import.meta.dirname, "..", "harnesses", "initial"));
  const program = "# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n";
  const model = withRetries(new OpenAICompatibleModel({ baseUrl: url, model: "bench" }, {}));
  const dir = mkdtempSync(join(tmpdir(), "hone-bench-"));

  const rollout = async (i: number) => {
    const env = new DiscoveryEnvironment({
      task: { metric: "s", direction: "maximize" },
      startProgram: program,
      maxEvals: 5,
      evaluate: async () => ({ valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 }),
    });
    const host = { revertToBest: () => env.revertToBest(), bestScore: () => env.best?.score };
    const trajectory = new JsonlTrajectory(join(dir, `t${i}.jsonl`));
    const started = performance.now();
    await runAgentLoop({
      harness: { ...harness, maxIterations: STEPS_PER_ROLLOUT },
      model,
      env,
      tools: harness.tools.map(toToolDefinition),
      taskMessage: "bench task",
      sampling: harness.sampling,
      middlewares: harness.middlewares.map((m) => builtinMiddlewares[m.name as keyof typeof builtinMiddlewares](m.params, host)),
      trajectory,
      budget: () => ({ used: env.used, left: env.left, total: env.total }),
      deadline: performance.now() + 60_000,
    });
    const perStep = (performance.now() - started) / STEPS_PER_ROLLOUT;
    trajectory.close();
    return perStep;
  };

  // The same request bodies the loop sent, posted with node:http on a keep-alive socket and nothing around them.
  const agent = new Agent({ keepAlive: true });
  const bare = (body: string) =>
    new Promise<number>((resolve) => {
      const t = performance.now();
      const req = request(
        `${url}/chat/completions`,
        { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            JSON.parse(Buffer.concat(chunks).toString());
            resolve(performance.now() - t);
          });
        },
      );
      req.end(body);
    });

  for (let i = 0; i < 5; i++) await rollout(i);
  const stepTimes: number[] = [];
  const bareTimes: number[] = [];
  for (let i = 0; i < ROLLOUTS; i++) {
    stepTimes.push(await rollout(100 + i));
    for (let k = 0; k < STEPS_PER_ROLLOUT; k++)
      bareTimes.push(
        await bare(bodies[(k % STEPS_PER_ROLLOUT) + 5 * STEPS_PER_ROLLOUT - STEPS_PER_ROLLOUT] ?? bodies[0] ?? "{}"),
      );
  }
  server.close();
  rmSync(dir, { recursive: true, force: true });
  const step = median(stepTimes);
  const rt = median(bareTimes);
  const ratio = step / rt;
  report(
    "agent step overhead (issue 2): zero-latency loopback model",
    [
      ["one agent step (median of rollouts)", ms(step)],
      ["one bare HTTP round trip, same bodies", ms(rt)],
      ["hone's overhead beyond the round trip", ms(step - rt)],
      ["ratio step / bare round trip", `${ratio.toFixed(2)}x`],
    ],
    { ok: step < 1 && ratio < 3, text: "target: a step under 1 ms and under 3x the bare round trip" },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStepOverhead();
