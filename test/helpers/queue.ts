import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { Redis } from "ioredis";
import { QUEUE_NAME } from "../../src/loop/distributed/job-queue.ts";
import { ROOT } from "./fixtures.ts";

/** A free loopback port for a test's own Redis. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });

/**
 * The Redis that .ci/run started (HONE_TEST_REDIS_URL), in a database of the calling file's own, or undefined when
 * none was started. Two test files run at once, and with one queue name on one database the workers one file started
 * would take the jobs the other queued.
 */
export function ciRedisUrl(db: number): string | undefined {
  const base = process.env.HONE_TEST_REDIS_URL;
  if (!base) return undefined;
  const u = new URL(base);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * A Redis for one test file: the one .ci/run started, in database `db` (the file's own), or else a redis-server of
 * the file's own on a free loopback port, ready when this resolves. `stop` ends the latter. Needs redis-server.
 */
export async function fileRedis(db: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const ci = ciRedisUrl(db);
  if (ci) return { url: ci, stop: async () => {} };
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const redis = await started("redis-server", args, /Ready to accept connections/);
  return { url: `redis://127.0.0.1:${port}`, stop: () => stopped(redis) };
}

/** A test's own redis-server on a free loopback port that requires `password`: its port, and the process to stop. */
export async function passwordRedis(password: string): Promise<{ port: number; redis: ChildProcess }> {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  const redis = await started("redis-server", [...args, "--requirepass", password], /Ready to accept connections/);
  return { port, redis };
}

/** Starts a process and resolves once a line of its output matches `ready`. */
export function started(cmd: string, args: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    const on = (d: Buffer) => ready.test(String(d)) && resolve(child);
    child.stdout?.on("data", on);
    child.stderr?.on("data", on);
    child.on("close", (code) => reject(new Error(`${cmd} exited with ${code} before it was ready`)));
  });
}

/** Stops a process started by the test (SIGTERM) and resolves once it is gone. */
export const stopped = (c: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    c.once("close", () => resolve());
    c.kill("SIGTERM");
  });

/**
 * A test's own Redis on a free loopback port with `workers` hone workers on it: `url` for --queue, and `stop`, which
 * stops them all (workers first). Needs redis-server (requireTool).
 */
export async function startQueue(workers: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const procs: ChildProcess[] = [];
  const stop = async () => {
    for (const p of procs.reverse()) await stopped(p);
  };
  try {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const redisArgs = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    procs.push(await started("redis-server", redisArgs, /Ready to accept connections/));
    for (let i = 0; i < workers; i++)
      procs.push(await started(process.execPath, [join(ROOT, "bin", "hone.js"), "worker", "--queue", url], / ready on /));
    return { url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The ids of the jobs a queue's workers completed whose ids start with `prefix`, from the queue's event stream (its
 * last 10,000 events): a job whose result its coordinator took leaves Redis, its events stay.
 */
export async function completedJobIds(url: string, prefix: string): Promise<Set<string>> {
  const redis = new Redis(url);
  try {
    const events = await redis.xrange(`bull:${QUEUE_NAME}:events`, "-", "+");
    const ids = new Set<string>();
    for (const [, fields] of events) {
      const at = (name: string) => fields[fields.indexOf(name) + 1];
      const jobId = at("jobId");
      if (at("event") === "completed" && jobId?.startsWith(prefix)) ids.add(jobId);
    }
    return ids;
  } finally {
    redis.disconnect();
  }
}
