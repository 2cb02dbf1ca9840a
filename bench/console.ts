// The console's run page API on a synthetic run of 10,000 rollouts (100 rounds x 100 candidates, 10 evaluations and
// 4 model calls each) beside a run of 100 rollouts, over HTTP from the running server, in one process.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startConsole } from "../src/console/server.ts";
import { writeSyntheticRun } from "../test/helpers/synthetic-run.ts";
import { median, ms, report, timeIt } from "./lib.ts";

async function measure(url: string, times: number): Promise<{ cold: number; median: number; p95: number; bytes: number }> {
  let bytes = 0;
  const cold = await timeIt(async () => {
    bytes = (await (await fetch(url)).arrayBuffer()).byteLength;
  });
  const runs: number[] = [];
  for (let i = 0; i < times; i++) runs.push(await timeIt(async () => (await fetch(url)).arrayBuffer()));
  runs.sort((a, b) => a - b);
  return { cold, median: median(runs), p95: runs[Math.floor(runs.length * 0.95)] as number, bytes };
}

export async function benchConsole(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "hone-bench-console-"));
  const big = await writeSyntheticRun(join(root, "big"), { rounds: 100, perRound: 100 });
  await writeSyntheticRun(join(root, "small"), { rounds: 10, perRound: 10 });
  const server = await startConsole({ root, port: 0 });
  try {
    const small = await measure(`${server.url}/api/runs/small`, 20);
    const large = await measure(`${server.url}/api/runs/big`, 20);
    const rolloutsPage = await measure(`${server.url}/api/runs/big/rollouts?offset=9000&limit=100`, 20);
    const list = await measure(`${server.url}/api/runs`, 20);
    const row = (m: Awaited<ReturnType<typeof measure>>) =>
      `cold ${ms(m.cold)}, median ${ms(m.median)}, p95 ${ms(m.p95)} (${(m.bytes / 1024).toFixed(0)} KiB)`;
    report(
      `console (issue 8): run page API, ${big.rollouts.toLocaleString()} rollouts and ${big.candidates.toLocaleString()} candidates`,
      [
        ["run page, 101 rollouts", row(small)],
        [`run page, ${big.rollouts.toLocaleString()} rollouts`, row(large)],
        ["ratio (100x the rollouts)", `${(large.median / small.median).toFixed(1)}x the time`],
        ["rollouts page (100 of 10,001, offset 9000)", row(rolloutsPage)],
        ["runs list (2 runs)", row(list)],
      ],
      {
        ok: large.cold < 300 && large.p95 < 300,
        text: "target: the run page answers in under 300 ms with 10,000 rollouts (cold and p95)",
      },
    );
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchConsole();
