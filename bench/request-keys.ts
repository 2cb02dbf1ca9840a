// The request cache's keys over one rollout's successive requests: RequestKeys (what a scope of the cache uses), which
// serialises and hashes only what is new, against hashing each whole body (`requestKey`, how every request was keyed
// before, kept as the reference the keys must equal). A body holds the whole conversation, so hashing it whole costs
// each step the conversation so far: the rollout's total grows with the square of its steps.
import { requestKey } from "../src/model/cache.ts";
import { OpenAICompatibleModel } from "../src/model/openai-compatible.ts";
import { RequestKeys } from "../src/model/request-keys.ts";
import type { ChatMessage, ChatRequest } from "../src/model/types.ts";
import { report, spread } from "./lib.ts";

const REPS = Number(process.env.BENCH_REPS ?? 5);
const STEPS = [20, 80, 320];
const model = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, {});

/** A discovery rollout's requests: a 3 KB program in the task, then an edit and its result (the program) a step. */
function rollout(steps: number): ChatRequest[] {
  const program = Array.from({ length: 60 }, (_, i) => `    c[${i}] = np.sqrt(r[${i}]) * 0.5 + x[${i}, 0]  # ${i}`).join("\n");
  const tools = ["view", "edit", "evaluate", "finish"].map((name) => ({
    type: "function" as const,
    function: {
      name,
      description: `${name} the program`,
      parameters: { type: "object", properties: { code: { type: "string" } } },
    },
  }));
  const messages: ChatMessage[] = [
    { role: "system", content: "You improve a program by small edits and evaluations. ".repeat(40) },
    { role: "user", content: `The program:\n${program}` },
  ];
  const requests: ChatRequest[] = [];
  for (let s = 0; s < steps; s++) {
    requests.push({ messages: [...messages], tools, sampling: { temperature: 1, max_tokens: 4096, seed: 1 } });
    const args = JSON.stringify({ code: program.slice(0, 800) });
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${s}`, type: "function", function: { name: "edit", arguments: args } }],
    });
    messages.push({ role: "tool", tool_call_id: `c${s}`, content: `Edit applied.\n${program}` });
  }
  return requests;
}

function timeKeys(requests: ChatRequest[], key: (r: ChatRequest) => string): { ms: number; keys: string[] } {
  const t = performance.now();
  const keys = requests.map(key);
  return { ms: performance.now() - t, keys };
}

export async function benchRequestKeys(): Promise<boolean> {
  const whole = new Map<number, number[]>(STEPS.map((n) => [n, []]));
  const incremental = new Map<number, number[]>(STEPS.map((n) => [n, []]));
  for (let r = 0; r < REPS; r++)
    for (const steps of STEPS) {
      const requests = rollout(steps); // new objects every repetition: nothing is known from the one before
      const flip = r % 2 === 1; // the two take turns going first
      const keys = new RequestKeys();
      const runs = flip
        ? [timeKeys(requests, (q) => keys.key(model, q)), timeKeys(requests, (q) => requestKey(model, q))].reverse()
        : [timeKeys(requests, (q) => requestKey(model, q)), timeKeys(requests, (q) => keys.key(model, q))];
      const [a, b] = runs as [{ ms: number; keys: string[] }, { ms: number; keys: string[] }];
      if (a.keys.join() !== b.keys.join()) throw new Error(`the keys of a ${steps}-step rollout differ`);
      whole.get(steps)?.push(a.ms);
      incremental.get(steps)?.push(b.ms);
    }
  const bytes = (steps: number) => rollout(steps).reduce((n, q) => n + JSON.stringify(model.wireBody(q)).length, 0) / 1e6;
  const rows: [string, string][] = STEPS.flatMap((steps): [string, string][] => [
    [
      `${steps} steps (${bytes(steps).toFixed(1)} MB of bodies): each body hashed whole`,
      spread(whole.get(steps) ?? [], " ms", 2),
    ],
    [`${steps} steps: RequestKeys`, spread(incremental.get(steps) ?? [], " ms", 2)],
  ]);
  const at = 80;
  return report(
    `request keys (issue 19, cost linear in a rollout's steps): one rollout's keys, ${REPS} repetitions taking turns`,
    rows,
    [
      {
        goal: { figure: `RequestKeys / each body hashed whole, ${at} steps`, op: "<=", value: 0.25, unit: "x" },
        samples: (incremental.get(at) ?? []).map((x, i) => x / ((whole.get(at) ?? [])[i] as number)),
      },
    ],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRequestKeys();
