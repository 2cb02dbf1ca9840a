import { afterEach, describe, expect, it } from "vitest";
import { IdleWatch } from "../../src/loop/distributed/idle-watch.ts";

// A coordinator's jobs that wait on a queue no worker serves are said, once per stretch; connected workers that are
// slow, or a Redis that does not list its clients, are not.

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const watches: IdleWatch[] = [];
afterEach(() => {
  for (const w of watches.splice(0)) w.stop();
});

function watch(workers: () => Promise<number>, waiting = () => 3) {
  const said: string[] = [];
  const w = new IdleWatch({
    url: "redis://:pw@queue.example.org:6379",
    waiting,
    workers,
    say: (t) => said.push(t),
    afterSec: 0.1,
  });
  watches.push(w);
  w.start();
  return { w, said };
}

describe("IdleWatch", () => {
  it("says once that no worker is connected, with the command that starts one and no password", async () => {
    const { said } = watch(async () => 0);
    await settle(400);
    expect(said).toEqual([
      "no hone worker is connected to the queue at redis://:***@queue.example.org:6379; 3 job(s) wait for one (start one: npx hone worker --queue redis://:***@queue.example.org:6379)",
    ]);
  });

  it("says it again after a worker's progress and a new stretch without one", async () => {
    const { w, said } = watch(async () => 0);
    await settle(300);
    w.progress();
    await settle(300);
    expect(said).toHaveLength(2);
  });

  it("says it once the workers that were connected are gone, though no job moved", async () => {
    let connected = 2;
    const { said } = watch(async () => connected);
    await settle(250);
    expect(said).toEqual([]);
    connected = 0;
    await settle(400);
    expect(said).toHaveLength(1);
  });

  it("says nothing when workers are connected, when they cannot be counted, or when nothing waits", async () => {
    const busy = watch(async () => 2);
    const unlisted = watch(async () => {
      throw new Error("ERR unknown command 'CLIENT'");
    });
    const idle = watch(
      async () => 0,
      () => 0,
    );
    await settle(400);
    expect([busy.said, unlisted.said, idle.said]).toEqual([[], [], []]);
  });
});
