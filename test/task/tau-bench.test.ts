import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BENCHMARKS, loadSplit, splitsOf } from "../../src/task/qa/benchmarks.ts";
import { ROOT } from "../helpers/fixtures.ts";

const FIXTURES = join(ROOT, "test", "fixtures", "datasets");
interface Steps {
  cases: {
    domain: string;
    index: number;
    steps: { name: string; arguments: string; observation: string }[];
    data_hash: string;
  }[];
}
// Observations and database hashes computed by τ-bench's own tools and hash on the fixture (README beside it).
const table = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "tau-bench", "steps.json"), "utf8")) as Steps;

async function world(domain: string, index: number, split = "test") {
  const id = `tau-bench-${domain}`;
  const tasks = await loadSplit(id, split as "test", { dir: FIXTURES });
  const task = tasks[index]!;
  return { task, world: await BENCHMARKS[id]!.conversation!.open(task) };
}

describe("hone's port of τ-bench's tools answers as τ-bench's own code does", () => {
  it.each(table.cases.map((c) => [`${c.domain} ${c.index}`, c] as const))("task %s", async (_name, c) => {
    const { world: w } = await world(c.domain, c.index);
    try {
      for (const s of c.steps)
        expect((await w.call(s.name, s.arguments)).observation, `${s.name} ${s.arguments}`).toBe(s.observation);
      expect(JSON.parse(await w.reward()).data_hash).toBe(c.data_hash);
    } finally {
      w.close();
    }
  });
});

describe("τ-bench's reward on every fixture task", () => {
  const all = ["tau-bench-retail", "tau-bench-airline"].flatMap((id) => splitsOf(BENCHMARKS[id]!).map((s) => [id, s] as const));
  it.each(all)(
    "%s %s: the gold actions score 1, a wrong action 0, doing nothing 0 where the task changes anything",
    async (id, split) => {
      const b = BENCHMARKS[id]!;
      const tasks = await loadSplit(id, split, { dir: FIXTURES });
      expect(tasks.length).toBeGreaterThan(0);
      for (const t of tasks) {
        for (const [kind, expected] of [
          ["gold", 1],
          ["wrong", 0],
        ] as const) {
          const w = await b.conversation!.open(t);
          try {
            await w.oracle(kind);
            expect(b.scorer.apply(await w.reward(), t.gold), `${t.id} ${kind}`).toEqual({ reward: expected });
          } finally {
            w.close();
          }
        }
        const idle = await b.conversation!.open(t);
        try {
          const r = JSON.parse(await idle.reward()) as { reward: number; r_actions: boolean; outputs: Record<string, boolean> };
          // Nothing done: right only for a task that changes nothing and asks for no output.
          expect(r.reward, t.id).toBe(r.r_actions && Object.keys(r.outputs).length === 0 ? 1 : 0);
        } finally {
          idle.close();
        }
      }
    },
  );

  it("takes arguments as τ-bench reads them (150.0 is a float) and refuses what is not an object", async () => {
    const { world: w } = await world("airline", 4);
    try {
      const user = "ethan_martin_2396";
      expect((await w.call("send_certificate", `{"user_id": "${user}", "amount": 150.0}`)).observation).toMatch(
        /amount 150\.0\./,
      );
      expect((await w.call("send_certificate", `{"user_id": "${user}", "amount": 150}`)).observation).toMatch(/amount 150\./);
      expect((await w.call("get_user_details", "[1]")).observation).toMatch(/^Error: /);
      expect((await w.call("calculate", '{"expression": "9**9**9**9"}')).observation).toMatch(/^Error: /);
      expect((await w.call("transfer_to_human_agents", '{"summary": "x"}')).done).toBe(true);
    } finally {
      w.close();
    }
  });
});
