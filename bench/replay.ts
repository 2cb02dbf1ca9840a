// `hone optimize` live on the offline model with 200 ms added latency per call, then `hone replay` of that run
// from its records with no endpoint: whole CLI processes, start-up included, every replay timed (the first too).
// A replay writes ~460 files and folders (a run directory), so what a file creation costs at that moment is printed
// beside it: on a journal-less ext4 it rises from ~0.02 to ~0.3 ms for a while after many files were removed.
// So is what a bare `node -e ""` takes just before each replay, and whether NODE_EXTRA_CA_CERTS is set: Node 20 reads
// that bundle and builds its whole root certificate store as it starts, before any JavaScript runs (nodejs/node#40524;
// with the 144 certificates of a system bundle, 82% of a bare start's instructions and ~12% of a replay's, by
// callgrind), so a machine that sets it starts every process, a replay included, ~40 ms of CPU later.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { benchDir, fileCreateMs, honeCli, report, spread } from "./lib.ts";

const REPS = Number(process.env.BENCH_REPS ?? 3);

function hone(cli: string, args: string[]): { seconds: number; out: string } {
  const t = performance.now();
  const out = execFileSync(cli, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  return { seconds: (performance.now() - t) / 1000, out };
}

export async function benchReplay(): Promise<boolean> {
  const cli = honeCli(); // dist/ fresh before anything is timed
  const dir = benchDir("replay");
  const live: number[] = [];
  const replay: number[] = [];
  const creates: number[] = [];
  const bare: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const run = join(dir, `live-${r}`);
    live.push(
      hone(
        cli,
        ["optimize", "--task", "circle-packing", "--rounds", "2", "--proposals", "4", "--max-evals", "20", "--concurrency", "4"]
          .concat(["--executor", "offline", "--proposer", "offline", "--cache", "off", "--seed", String(r), "--json"])
          .concat(["--executor-offline-latency-ms", "200", "--proposer-offline-latency-ms", "200", "--out", run]),
      ).seconds,
    );
    creates.push(fileCreateMs(dir));
    bare.push(hone(process.execPath, ["-e", ""]).seconds);
    const again = hone(cli, ["replay", run, "--out", join(dir, `replay-${r}`), "--json"]);
    if (!(JSON.parse(again.out) as { matches: boolean }).matches) throw new Error(`the replay of ${run} differs from it`);
    replay.push(again.seconds);
  }
  return report(
    `replay (issue 19): hone optimize, 2 rounds x 4 proposals, 20 evaluations per rollout, offline model +200 ms per call, then hone replay of it; whole processes, ${REPS} repetitions`,
    [
      ["hone optimize (live)", spread(live, " s", 2)],
      ["hone replay (records only, no endpoint; matches)", spread(replay, " s", 2)],
      ["creating a file in the bench's folder just before each replay (not judged)", spread(creates, " ms", 3)],
      [
        `node -e "" just before each replay (not judged; NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? "set" : "not set"})`,
        spread(bare, " s", 3),
      ],
    ],
    [
      {
        goal: { figure: "live / replay", op: ">=", value: 50, unit: "x" },
        samples: live.map((x, i) => x / (replay[i] as number)),
      },
    ],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchReplay();
