import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hone, unexpectedStderr } from "../helpers/cli.ts";
import { type FakeVllmOptions, startFakeVllm } from "../helpers/fake-vllm.ts";
import { copyOf, edit, INITIAL_HARNESS, tempDir } from "../helpers/fixtures.ts";
import { startStrictOpenAI } from "../helpers/strict-openai.ts";

/**
 * Real endpoints, end to end through the CLI: discovery rollouts against the strict OpenAI-like fake in the openai
 * dialect and against the vLLM-like fake with a small window, streamed and not, a Mistral model, a stalled server,
 * and hone optimize with both roles on the fakes. Nothing hone sends may be refused (context-length refusals are
 * the vLLM fake's answer to a prompt past its window, and only where the harness lets them happen).
 */
const KEY = "sk-fake-openai-key-0123456789";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});
async function vllm(o: FakeVllmOptions = {}) {
  const f = await startFakeVllm("Qwen/Qwen3-8B", o);
  closers.push(f.close);
  return f;
}
async function openai(o: Parameters<typeof startStrictOpenAI>[0] = {}) {
  const f = await startStrictOpenAI({ apiKey: KEY, ...o });
  closers.push(f.close);
  return f;
}
/** Each test runs the CLI once or more on a machine other work shares: generous limits, no timing claims. */
const SLOW = { timeout: 180_000 };
type Event = Record<string, unknown> & { type: string };
const trajectory = (out: string): Event[] =>
  readFileSync(join(out, "trajectory.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
const result = (out: string) => JSON.parse(readFileSync(join(out, "result.json"), "utf8"));

/** The initial harness with hone:context_budget added. */
function budgetedHarness(params = "      keep_recent_turns: 3"): string {
  const dir = copyOf(INITIAL_HARNESS);
  edit(join(dir, "agent.yaml"), (t) =>
    t.replace("stop_tools: [finish]", `  - import: hone:context_budget\n    params:\n${params}\nstop_tools: [finish]`),
  );
  return dir;
}
const run = (base: string, model: string, extra: string[], out: string) =>
  hone(
    [
      "run",
      "--task",
      "circle-packing",
      "--base-url",
      base,
      "--model",
      model,
      "--max-evals",
      "8",
      "--out",
      out,
      "--json",
      ...extra,
    ],
    {
      env: { OPENAI_API_KEY: KEY },
    },
  );

describe("a discovery rollout against a strict OpenAI-like server (openai dialect)", () => {
  const cases = [
    { model: "o4-mini", stream: false, reasoning: 64 },
    { model: "o4-mini", stream: true, reasoning: 64 },
    { model: "gpt-4.1-mini", stream: true, reasoning: 0 },
  ];
  for (const c of cases)
    it(`finishes with ${c.model}${c.stream ? ", streamed" : ""}: reasoning tokens counted, nothing refused`, SLOW, async () => {
      const f = await openai();
      const out = join(tempDir(), "run");
      const r = await run(f.url, c.model, ["--dialect", "openai", ...(c.stream ? ["--stream"] : [])], out);
      expect(unexpectedStderr(r.stderr)).toEqual([]);
      expect(r.code).toBe(0);
      expect(f.refusals).toEqual([]);
      expect(result(out).status).toBe("completed");
      const calls = trajectory(out).filter((e) => e.type === "model_call");
      expect(calls.length).toBeGreaterThan(3);
      for (const e of calls) expect((e.usage as { reasoning_tokens: number }).reasoning_tokens).toBe(c.reasoning);
      expect(result(out).usage.reasoning_tokens).toBe(c.reasoning * calls.length);
      for (const body of f.requests) {
        expect(body.stream ?? false).toBe(c.stream);
        for (const k of ["temperature", "top_p", "max_tokens"]) expect(body).not.toHaveProperty(k);
        // The rollout's seed goes to a chat model and never to a reasoning model.
        expect("seed" in body).toBe(c.reasoning === 0);
        expect(body.max_completion_tokens).toBe(4096);
      }
    });
});

describe("a discovery rollout against a vLLM-like server with a small context window", () => {
  it("compacts before the window is passed (hone:context_budget), records reasoning and every compaction", SLOW, async () => {
    const f = await vllm({ maxModelLen: 8192 });
    const out = join(tempDir(), "run");
    const r = await run(f.url, "Qwen/Qwen3-8B", ["--harness", budgetedHarness()], out);
    expect(unexpectedStderr(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    expect(f.refusals).toEqual([]);
    const events = trajectory(out);
    expect(result(out).status).toBe("completed");
    const compactions = events.filter((e) => e.type === "compaction");
    expect(compactions.length).toBeGreaterThan(0);
    for (const c of compactions) expect(c).toMatchObject({ trigger: "budget", window: 8192, strategy: "summarize" });
    const assistants = events.filter((e) => e.type === "assistant");
    expect(assistants.every((e) => typeof e.reasoning === "string" && (e.reasoning as string).includes("next step"))).toBe(true);
    expect(events.filter((e) => e.type === "model_call").every((e) => e.context_window === 8192)).toBe(true);
    // Reasoning goes back to vLLM on the assistant messages, as vLLM's chat parser reads it.
    const last = f.requests.at(-1)?.messages as { role: string; reasoning?: string }[];
    expect(last.some((m) => m.role === "assistant" && typeof m.reasoning === "string")).toBe(true);
  });

  it(
    "without hone:context_budget, streamed: a context-length refusal compacts and retries instead of ending the rollout",
    SLOW,
    async () => {
      const f = await vllm({ maxModelLen: 8192, reasoning: "reasoning_content" });
      const out = join(tempDir(), "run");
      const r = await run(f.url, "Qwen/Qwen3-8B", ["--stream"], out);
      expect(r.code).toBe(0);
      expect(result(out).status).toBe("completed");
      const compactions = trajectory(out).filter((e) => e.type === "compaction");
      expect(compactions.length).toBeGreaterThan(0);
      for (const c of compactions) expect(c).toMatchObject({ trigger: "context_error", window: 8192 });
      expect(f.refusals.length).toBe(compactions.length);
      for (const x of f.refusals) expect(x.message).toMatch(/maximum context length is 8192 tokens/);
      expect(
        trajectory(out)
          .filter((e) => e.type === "assistant")
          .every((e) => typeof e.reasoning === "string"),
      ).toBe(true);
    },
  );

  it("with a Mistral model that gives no tool-call ids, names them in the one form it accepts", SLOW, async () => {
    const f = await vllm({ mistralIds: true });
    const out = join(tempDir(), "run");
    const r = await run(f.url, "Qwen/Qwen3-8B", [], out);
    expect(r.code).toBe(0);
    expect(f.refusals).toEqual([]);
    const ids = trajectory(out)
      .filter((e) => e.type === "assistant")
      .flatMap((e) => (e.tool_calls as { id: string }[]).map((c) => c.id));
    expect(ids.length).toBeGreaterThan(3);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("a stalled server", () => {
  it("fails the call within the idle timeout as a retried timeout fault, and the rollout goes on", SLOW, async () => {
    const f = await vllm({ stallFirst: 1 });
    const out = join(tempDir(), "run");
    const r = await run(f.url, "Qwen/Qwen3-8B", ["--stream", "--timeouts", "idle=1"], out);
    expect(r.code).toBe(0);
    const first = trajectory(out).find((e) => e.type === "model_call");
    expect(first?.attempts).toBe(2);
    expect(first?.faults).toEqual([{ kind: "timeout", message: expect.stringMatching(/no token for 1 s \(the idle timeout\)/) }]);
  });
});

describe("hone optimize with both roles on the fakes", () => {
  it(
    "runs rounds (executor on the small-window vLLM fake, streamed, proposer a reasoning model on the strict OpenAI fake), nothing refused, and replays exactly",
    SLOW,
    async () => {
      const o = await openai();
      const v = await vllm({ maxModelLen: 8192 });
      const out = join(tempDir(), "opt");
      const r = await hone(
        [
          "optimize",
          "--task",
          "circle-packing",
          ...["--rounds", "1", "--proposals", "2", "--max-evals", "6", "--cache", "off"],
          ...["--seed-harness", budgetedHarness()],
          ...["--executor-model", "Qwen/Qwen3-8B", "--executor-base-url", v.url, "--executor-stream"],
          ...["--proposer-model", "o4-mini", "--proposer-base-url", o.url, "--proposer-dialect", "openai"],
          ...["--out", out, "--json"],
        ],
        { env: { OPENAI_API_KEY: KEY } },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).rounds).toHaveLength(2);
      expect(o.refusals).toEqual([]);
      expect(v.refusals).toEqual([]);
      expect(o.requests.length).toBeGreaterThan(0);
      expect(v.requests.every((b) => b.stream === true)).toBe(true);
      const compactions = readFileSync(
        join(out, "rollouts", readdirSync(join(out, "rollouts"))[0] ?? "", "trajectory.jsonl"),
        "utf8",
      );
      expect(compactions).toMatch(/"type":"compaction"/);
      // The window and the server's counts are recorded with the responses, so a replay compacts where the run did.
      const replay = await hone(["replay", out, "--json"]);
      expect(replay.code, replay.stdout + replay.stderr).toBe(0);
      expect(JSON.parse(replay.stdout).matches).toBe(true);
    },
  );
});

describe("hone models check", () => {
  it("passes on a vLLM release without tool_choice required, falling back to auto and saying so", SLOW, async () => {
    const f = await vllm({ noRequiredToolChoice: true, legacyErrors: true, maxModelLen: 4096 });
    const r = await hone(["models", "check", "--base-url", f.url, "--model", "Qwen/Qwen3-8B"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/context window of 4096 tokens/);
    expect(r.stdout).toMatch(/tool_choice "required" was refused, so "auto" was used/);
    expect(r.stdout).toMatch(/ready/);
  });
});
