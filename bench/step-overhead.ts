// hone's own overhead per agent step (model call through the client, tool dispatch, middleware, trajectory write)
// against a zero-latency model server in another process, beside one bare HTTP round trip to the same server.

import { Agent, request } from "node:http";
import { join } from "node:path";
import { loadHarness } from "../src/harness/package.ts";
import { OpenAICompatibleModel } from "../src/model/openai-compatible.ts";
import { withRetries } from "../src/model/retry.ts";
import { runAgentLoop } from "../src/runtime/agent-loop.ts";
import { DiscoveryEnvironment } from "../src/runtime/discovery-env.ts";
import { toToolDefinition } from "../src/runtime/environment.ts";
import { builtinMiddlewares } from "../src/runtime/middlewares/index.ts";
import { JsonlTrajectory } from "../src/store/trajectory.ts";
import { benchDir, report, spread } from "./lib.ts";
import { LineProcess } from "./peers/line-process.ts";

const STEPS_PER_ROLLOUT = 20;
const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 4);
const REPS = Number(process.env.BENCH_REPS ?? 10);

export async function benchStepOverhead(): Promise<boolean> {
  // The model server runs in its own process, so its work does not share the client's event loop.
  const server = new LineProcess(process.execPath, [join(import.meta.dirname, "peers", "model-server.mjs")]);
  const { port } = (await server.next()) as { port: number };
  const url = `http://127.0.0.1:${port}/v1`;
  const harness = loadHarness(join(import.meta.dirname, "..", "harnesses", "initial"));
  const program = "# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n";
  const model = withRetries(new OpenAICompatibleModel({ baseUrl: url, model: "bench" }, {}));
  const dir = benchDir("step");

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
    const elapsed = performance.now() - started;
    trajectory.close();
    return elapsed;
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
  const bodies = (await fetch(`http://127.0.0.1:${port}/bodies`).then((r) => r.json())) as string[];
  // The bodies of one whole rollout (after the warm-up ones), posted in the same order.
  const sent = bodies.slice(4 * STEPS_PER_ROLLOUT, 5 * STEPS_PER_ROLLOUT);
  // Each repetition: ROLLOUTS rollouts of STEPS_PER_ROLLOUT steps, then as many bare round trips; the ratio of
  // their means is that repetition's figure.
  const step: number[] = [];
  const rt: number[] = [];
  for (let r = 0; r < REPS; r++) {
    let loop = 0;
    let barely = 0;
    for (let i = 0; i < ROLLOUTS; i++) {
      loop += await rollout(100 + r * ROLLOUTS + i);
      for (const body of sent) barely += await bare(body);
    }
    step.push(loop / (ROLLOUTS * STEPS_PER_ROLLOUT));
    rt.push(barely / (ROLLOUTS * sent.length));
  }
  server.close();
  const ratios = step.map((x, i) => x / (rt[i] as number));
  return report(
    `agent step overhead (issue 19): zero-latency model server in its own process, ${REPS} repetitions of ${ROLLOUTS} rollouts x ${STEPS_PER_ROLLOUT} steps`,
    [
      ["one agent step (mean of a repetition)", spread(step, " ms", 3)],
      ["one bare HTTP round trip, same bodies", spread(rt, " ms", 3)],
      [
        "hone's own time per step beyond it",
        spread(
          step.map((x, i) => x - (rt[i] as number)),
          " ms",
          3,
        ),
      ],
    ],
    [{ goal: { figure: "agent step / bare round trip", op: "<=", value: 3, unit: "x" }, samples: ratios }],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStepOverhead();
