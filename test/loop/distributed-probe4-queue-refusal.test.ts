import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { JobQueue } from "../../src/loop/distributed/job-queue.ts";
import { refuseRefusingQueue } from "../../src/loop/distributed/queue-connection.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { passwordRedis, stopped } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// A Redis that answers but refuses hone's connection: a wrong password, none where one is required, a database
// number out of range. Before, a coordinator crashed with an internal error (exit 1, ioredis's stack), a worker
// retried for ever, and with a refused database both went on in database 0, among other runs' jobs (a worker said
// "ready" and ran them). Now each is refused as it starts, with exit 6 (a queue that does not answer: README), the
// reason, what to fix, and never the password.

const PASSWORD = "probe4-pw-d41d8cd9";
let redis: ChildProcess | undefined;
let port = 0;

beforeAll(async () => {
  if (missing("redis-server")) return;
  ({ port, redis } = await passwordRedis(PASSWORD));
}, 30_000);

afterAll(async () => {
  if (redis) await stopped(redis);
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

const refusals = () => [
  { url: `redis://:wrong-pw@127.0.0.1:${port}`, says: /refuses hone \(WRONGPASS[^)]*\): give the user and password/ },
  { url: `redis://127.0.0.1:${port}`, says: /refuses hone \(NOAUTH[^)]*\): give the user and password/ },
  { url: `redis://:${PASSWORD}@127.0.0.1:${port}/99`, says: /refuses hone \(ERR DB index is out of range\): give a database/ },
];

describe("a queue whose Redis refuses hone", () => {
  it("stops `hone worker` at once with exit 6 and the reason", { timeout: 120_000 }, async () => {
    for (const { url, says } of refusals()) {
      const r = await hone(["worker", "--queue", url], { timeoutMs: 30_000 });
      expect(r.code, `${url}\n${r.stdout}${r.stderr}`).toBe(6);
      expect(r.stderr).toMatch(says);
      expect(r.stdout).not.toMatch(/ ready on /);
      expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    }
  });

  it("stops a coordinator's run with exit 6, not an internal error, and leaves no run folder", { timeout: 180_000 }, async () => {
    for (const { url, says } of refusals()) {
      const out = join(tempDir(), "run");
      const args = ["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "2", "--queue", url];
      const r = await hone([...args, "--out", out], { timeoutMs: 60_000 });
      expect(r.code, `${url}\n${r.stderr}`).toBe(6);
      expect(r.stderr).toMatch(says);
      expect(r.stderr).not.toMatch(/internal error|waiting for it/);
      expect(r.stderr).not.toContain(PASSWORD);
      expect(existsSync(out)).toBe(false);
    }
  });

  it("stops `hone optimize` the same way before round 0, leaving no run folder", { timeout: 120_000 }, async () => {
    const { url, says } = refusals()[0] as { url: string; says: RegExp };
    const out = join(tempDir(), "opt");
    const args = ["optimize", "--task", "circle-packing", "--rounds", "1", "--max-evals", "2"];
    const r = await hone([...args, "--queue", url, "--out", out], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(says);
    expect(r.stderr).not.toContain(PASSWORD);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses in the queue's start (JobQueue.ready) as an endpoint error", { timeout: 30_000 }, async () => {
    const said: string[] = [];
    const q = new JobQueue(`redis://:${PASSWORD}@127.0.0.1:${port}/99`, 60, (t) => said.push(t));
    try {
      const err = await q.ready().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HoneError);
      expect((err as HoneError).exit).toBe("endpoint");
      expect(said).toEqual([]);
    } finally {
      await q.close();
    }
  });

  it("still takes a URL it accepts", { timeout: 30_000 }, async () => {
    const q = new JobQueue(`redis://:${PASSWORD}@127.0.0.1:${port}/3`);
    try {
      await q.ready();
    } finally {
      await q.close();
    }
  });

  it("does not stop for a refusal a retry or BullMQ's own commands may get past (NOPERM on PING, a busy server)", {
    timeout: 30_000,
  }, async () => {
    const admin = new Redis({ host: "127.0.0.1", port, password: PASSWORD, lazyConnect: true });
    await admin.connect();
    try {
      // An ACL user allowed everything but PING: hone's start-up check meets NOPERM, BullMQ never sends PING.
      await admin.call("ACL", "SETUSER", "noping", "on", ">noping-pw", "~*", "&*", "+@all", "-ping");
      await expect(refuseRefusingQueue(`redis://noping:noping-pw@127.0.0.1:${port}`)).resolves.toBeUndefined();
      await expect(refuseRefusingQueue(`redis://noping:wrong@127.0.0.1:${port}`)).rejects.toThrow(/WRONGPASS/);
      // A user refused SELECT would go on in database 0, among other runs' jobs: refused, naming what to change.
      await admin.call("ACL", "SETUSER", "noselect", "on", ">noselect-pw", "~*", "&*", "+@all", "-select");
      await expect(refuseRefusingQueue(`redis://noselect:noselect-pw@127.0.0.1:${port}/2`)).rejects.toThrow(
        /NOPERM.*give a database number this user may use/,
      );
    } finally {
      await admin.call("ACL", "DELUSER", "noping", "noselect");
      admin.disconnect();
    }
  });
});
