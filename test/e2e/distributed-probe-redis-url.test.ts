import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { JobQueue } from "../../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT } from "../helpers/fixtures.ts";
import { freePort, started, stopped } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// --queue takes the Redis URLs people have: an ACL user's (redis://user:password@host, Redis 6 and later, the way
// managed Redis services hand them out) and an IPv6 address's (redis://[::1]:6379). Each reaches its Redis as that
// user, at that address; a database part that is not a number is refused before anything connects.

const USER = "hone-worker";
const USER_PASSWORD = "a-user's password";
const DEFAULT_PASSWORD = "the-default-users-password";
let port = 0;
let redis: ChildProcess | undefined;
let ipv6 = false;

beforeAll(async () => {
  if (missing("redis-server")) return;
  port = await freePort();
  // The default user needs a password of its own and a second user has another, as on a server with ACLs.
  const args = ["--port", String(port), "--save", "", "--appendonly", "no", "--requirepass", DEFAULT_PASSWORD];
  try {
    redis = await started("redis-server", [...args, "--bind", "127.0.0.1 ::1"], /Ready to accept connections/);
    ipv6 = true;
  } catch {
    redis = await started("redis-server", [...args, "--bind", "127.0.0.1"], /Ready to accept connections/);
  }
  const admin = new Redis({ host: "127.0.0.1", port, password: DEFAULT_PASSWORD });
  await admin.call("ACL", "SETUSER", USER, "on", `>${USER_PASSWORD}`, "~*", "&*", "+@all");
  admin.disconnect();
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

afterAll(async () => {
  if (redis) await stopped(redis);
});

const userUrl = () => `redis://${USER}:${encodeURIComponent(USER_PASSWORD)}@127.0.0.1:${port}`;

describe("--queue URLs", () => {
  it("connects as the ACL user the URL names", async () => {
    const client = new Redis({ ...connectionFrom(userUrl()), lazyConnect: true });
    client.on("error", () => undefined);
    try {
      await client.connect();
      expect(await client.call("ACL", "WHOAMI")).toBe(USER);
    } finally {
      client.disconnect();
    }
  });

  it("starts a coordinator's queue and a hone worker with an ACL user's URL", { timeout: 90_000 }, async () => {
    const queue = new JobQueue(userUrl(), 60, () => undefined);
    try {
      await Promise.race([
        queue.ready(),
        new Promise((_, reject) => setTimeout(() => reject(new Error("the queue never became ready")), 10_000)),
      ]);
    } finally {
      await queue.close();
    }
    // The worker says it is ready, or that its queue does not answer (WRONGPASS, for a user it does not log in as).
    const worker = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), "worker", "--queue", userUrl()], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const said = new Promise<void>((resolve) => {
      const on = (d: Buffer) => {
        output += d;
        if (/ ready on |not answering/.test(output)) resolve();
      };
      worker.stdout.on("data", on);
      worker.stderr.on("data", on);
      setTimeout(resolve, 45_000);
    });
    try {
      await said;
      expect(output).toMatch(/ ready on /);
      expect(output).not.toMatch(/WRONGPASS|not answering/);
    } finally {
      await stopped(worker);
    }
  });

  it("connects to an IPv6 address written in brackets", async (ctx) => {
    if (!ipv6) return ctx.skip();
    const client = new Redis({ ...connectionFrom(`redis://:${DEFAULT_PASSWORD}@[::1]:${port}`), lazyConnect: true });
    client.on("error", () => undefined);
    try {
      await Promise.race([
        client.connect(),
        new Promise((_, reject) => setTimeout(() => reject(new Error("no connection to [::1]")), 5000)),
      ]);
      expect(await client.ping()).toBe("PONG");
    } finally {
      client.disconnect();
    }
  });

  it("refuses a database part that is not a number, naming it, with the password hidden", () => {
    expect(() => connectionFrom("redis://:pw@127.0.0.1:6379/queue")).toThrow(/database number, not "queue"/);
    expect(() => connectionFrom("redis://:pw@127.0.0.1:6379/queue")).not.toThrow(/pw/);
    expect(connectionFrom("redis://127.0.0.1:6379/3").db).toBe(3);
    expect(connectionFrom("redis://127.0.0.1:6379/").db).toBeUndefined();
  });
});

describe("hone worker --concurrency", () => {
  it("refuses what is not a whole number of rollouts, at least 1, with exit 2 (and does not hang)", {
    timeout: 120_000,
  }, async () => {
    for (const n of ["0", "1.5", "many"]) {
      const r = await hone(["worker", "--queue", `redis://127.0.0.1:${port || 6379}`, "--concurrency", n], { timeoutMs: 30_000 });
      expect([n, r.code]).toEqual([n, 2]);
      expect(r.stderr).toMatch(/--concurrency takes a whole number/);
      expect(r.stderr).not.toMatch(/internal error/);
    }
  });
});
