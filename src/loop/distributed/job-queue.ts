import { type Job, Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { withoutPassword } from "../../secret-url.ts";
import { IdleWatch } from "./idle-watch.ts";
import {
  type JobHarness,
  packageDigest,
  packageKey,
  packDir,
  type QAJobData,
  queueJobId,
  type RolloutJobData,
} from "./job-data.ts";
import { connectionFrom, connectionHint, type QueueConnection, refuseRefusingQueue } from "./queue-connection.ts";

// The coordinator's side of the BullMQ queue: its name (its connection is queue-connection.ts's), and JobQueue, which adds jobs, puts their
// packages into Redis and waits for each job's end (an event, or a look at the queue); the runners of bullmq.ts use it.

export const QUEUE_NAME = "hone-rollouts";

/** How long a harness package stays in the queue's Redis past the last batch of jobs that named it: a week. */
export const PACKAGE_TTL_SEC = 7 * 24 * 3600;

/**
 * How long a finished job (its result or its failure) that no coordinator took stays in the queue's Redis, for one
 * restarted with --resume to collect: a week, as a package does. BullMQ removes older ones as later jobs end the same
 * way (an expired result as a later job completes, an expired failure as a later job fails). A job whose result its
 * coordinator took leaves Redis at once (`forget`): Redis holds the results of jobs in flight, not a week's.
 */
export const JOB_TTL_SEC = PACKAGE_TTL_SEC;

/** How long taken jobs gather before they leave Redis together (one round trip for all of them). */
const FORGET_AFTER_MS = 500;

/**
 * How many events the queue's stream keeps (about four a job; BullMQ's default is 10,000). A job's completed event
 * carries its whole result, so the stream is most of what Redis holds: 31 MB after 2000 jobs of 17 KB results at
 * BullMQ's default, and a rollout's result can be 20 times that. A coordinator reads events as they come; one paused
 * past them finds its jobs' ends by asking (`sweep`).
 */
export const EVENTS_KEPT = 2000;

/** How long a job's wait goes without its end before the queue is asked about the job (`sweep`), and how often. */
export const SWEEP_SEC = 60;

/** How long closing waits for Redis to take its connections' QUIT before it drops them (a Redis that is down). */
const CLOSE_WAIT_MS = 2000;

/** How a job's wait ends: with its return value or an error. */
type Outcome = { value: unknown } | { error: Error };

/** How a job is submitted: its attempts, what takes its value into the run, and whether it stays in Redis after. */
export interface Submit<T> {
  attempts: number;
  take?: (value: unknown) => T;
  keep?: boolean;
}

/** A job's own failure, as the queue recorded it (not an error of the queue's or of this coordinator's). */
class JobFailed extends Error {}

/**
 * A wait for job `id`: ended by its events, by a look at the job (`sweep`) or by the queue's closing; `found` when the
 * job was in the queue already. `added` once the job is in the queue, `since` when the wait began.
 */
interface Wait {
  readonly id: string;
  readonly since: number;
  added: boolean;
  end(o: Outcome): void;
  found(): void;
}

/** The coordinator's side of the queue: deterministic job ids, one waiter per job, results as they finish. */
export class JobQueue {
  private readonly queue: Queue;
  private readonly connection: QueueConnection;
  private events?: Promise<QueueEvents>;
  /** Every wait not ended yet, by job id: one listener per kind of event serves them all (`ready`). */
  private readonly waits = new Map<string, Set<Wait>>();
  /** Package folders read and digested, once each: a package's folder does not change while a run uses it (HarnessCache). */
  private readonly packed = new Map<string, { digest: string; json: string }>();
  private sweeper?: NodeJS.Timeout;
  private sweeping = false;
  /** Jobs whose end this coordinator took, to leave Redis together (`forget`). */
  private taken: string[] = [];
  private forgetting?: NodeJS.Timeout;
  /** The connection that removes them (BullMQ's client offers no ZREM). */
  private janitor?: Redis;
  private closed = false;
  /** Whether the queue's Redis took a connection of the start's (`ready`): its refusals until then are not waits. */
  private checked = false;
  /** The connection that reads where the event stream ends, while it does (`ready`); then the stream's reader. */
  private starting?: Redis;
  private listening?: QueueEvents;
  /** Says when this coordinator's jobs wait and no worker is connected (started with the event stream's reader). */
  private readonly idle: IdleWatch;

  /** Says a lost connection, once per kind of error: BullMQ would print a stack for every retry. */
  private readonly lost: (err: Error) => void;

  constructor(
    private readonly url: string,
    private readonly sweepSec = SWEEP_SEC,
    say: (text: string) => void = (text) => process.stderr.write(`hone: ${text}\n`),
  ) {
    this.connection = connectionFrom(url);
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection, streams: { events: { maxLen: EVENTS_KEPT } } });
    // One waiter per job in flight listens on these emitters.
    this.queue.setMaxListeners(0);
    const said = new Set<string>();
    this.lost = (err) => {
      const code = (err as NodeJS.ErrnoException).code;
      const kind = code ?? err.message;
      // Redis's own refusal before the start's check has run is that check's to say (`ready`), not a wait.
      if (this.closed || said.has(kind) || (code === undefined && !this.checked)) return;
      said.add(kind);
      say(
        `the queue at ${withoutPassword(url)} is not answering (${kind}); waiting for it, the connection retries${connectionHint(err)}`,
      );
    };
    this.queue.on("error", this.lost);
    this.idle = new IdleWatch({ url, waiting: () => this.waits.size, workers: () => this.queue.getWorkersCount(), say });
  }

  /**
   * The queue's events from the stream's last entry as it is now. A QueueEvents left to start from "$" reads from
   * wherever the stream is when its first XREAD reaches Redis, which can be after a job added meanwhile has
   * finished: its completion was never seen, and the job's waiter (which had checked before it finished) waited
   * forever. Seen with workers that finish a job within 30 ms of its being added.
   */
  ready(): Promise<QueueEvents> {
    this.events ??= (async () => {
      // A Redis that refuses the connection (a wrong password, a database out of range) is said now, not retried.
      await refuseRefusingQueue(this.url);
      this.checked = true;
      const client = new Redis({ ...this.connection, lazyConnect: true });
      client.on("error", this.lost);
      this.starting = client;
      const last = await client.xrevrange(this.queue.toKey("events"), "+", "-", "COUNT", 1).finally(() => {
        this.starting = undefined;
        client.quit().catch(() => client.disconnect());
      });
      const events = new QueueEvents(QUEUE_NAME, { connection: this.connection, lastEventId: last[0]?.[0] ?? "0-0" });
      this.listening = events;
      events.setMaxListeners(0);
      events.on("error", this.lost);
      // One listener per kind: the per-job event names would add and remove three listeners for every job.
      const each = (jobId: string, act: (w: Wait) => void) => {
        for (const w of this.waits.get(jobId) ?? []) act(w);
      };
      events.on("completed", (e) => each(e.jobId, (w) => w.end({ value: e.returnvalue })));
      events.on("failed", (e) => each(e.jobId, (w) => w.end({ error: new JobFailed(e.failedReason) })));
      events.on("duplicated", (e) => each(e.jobId, (w) => w.found()));
      // Any worker's progress, on any run's job: the queue is served.
      for (const kind of ["active", "completed", "failed"] as const) events.on(kind, () => this.idle.progress());
      await events.waitUntilReady();
      if (!this.closed) {
        this.sweeper = setInterval(() => void this.sweep(), this.sweepSec * 1000).unref();
        this.idle.start();
      }
      return events;
    })();
    return this.events;
  }

  /**
   * Adds the job unless a job with its id exists (a restarted coordinator), then waits for its return value, which
   * `take` takes into the run (by default, as it is). The id carries a digest of the work (queueJobId), so only the
   * very same work is ever found instead of run. The job's end is listened for before it is added, so a new job costs
   * one round trip (BullMQ's own waiter asks Redis once more whether the job has finished, for every job); only a job
   * that was there already (BullMQ says so with a `duplicated` event) is looked up at once (`lookUp`), since it may
   * have finished before anyone listened. A job whose result was taken, or whose failure was said, leaves Redis
   * (unless `keep`: its caller has no other record of it until later); one whose `take` threw stays (a week) for a
   * resumed run.
   */
  async submit<T>(
    runKey: string,
    jobId: string,
    data: RolloutJobData | QAJobData,
    { attempts, take = (value) => value as T, keep = false }: Submit<T>,
  ): Promise<T | { failed: string }> {
    const id = queueJobId(runKey, data);
    let value: unknown;
    try {
      await this.ready();
      value = await this.finished(id, () =>
        this.queue.add(jobId, data, {
          jobId: id,
          attempts,
          backoff: { type: "fixed", delay: 500 },
          removeOnComplete: { age: JOB_TTL_SEC },
          removeOnFail: { age: JOB_TTL_SEC },
        }),
      );
    } catch (err) {
      if (err instanceof JobFailed && !keep) this.forget(id);
      return { failed: `the queue job ${id} failed: ${(err as Error).message}` };
    }
    const taken = take(value);
    if (!keep) this.forget(id);
    return taken;
  }

  /**
   * Removes a finished job from Redis: its record and its place in the finished sets (BullMQ's own removal would
   * add an event for every coordinator to read). Jobs gather for FORGET_AFTER_MS and go in one transaction; a Redis
   * that does not answer keeps them, for their week-long expiry to remove.
   */
  private forget(id: string): void {
    if (this.closed) return;
    this.taken.push(id);
    this.forgetting ??= setTimeout(() => void this.forgetTaken(), FORGET_AFTER_MS);
  }

  private async forgetTaken(): Promise<void> {
    this.forgetting = undefined;
    // A job that is waited for again (the same work asked for anew in this run) stays until that wait ends too.
    const ids = this.taken.splice(0).filter((id) => !this.waits.has(id));
    if (ids.length === 0) return;
    if (!this.janitor) {
      this.janitor = new Redis({ ...this.connection, lazyConnect: true });
      this.janitor.on("error", this.lost);
    }
    // One transaction: a job added again meanwhile finds it whole or not at all.
    const batch = this.janitor.multi();
    for (const id of ids) {
      batch.zrem(this.queue.toKey("completed"), id).zrem(this.queue.toKey("failed"), id);
      batch.del(this.queue.toKey(id), this.queue.toKey(`${id}:logs`));
    }
    await batch.exec().catch(() => undefined);
  }

  /**
   * The return value of job `id` once it completes (rejected when it fails, or when this queue closes first),
   * listened for before `add` runs.
   */
  private finished(id: string, add: () => Promise<Job>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const wait: Wait = {
        id,
        since: Date.now(),
        added: false,
        end: (o) => {
          if (!this.unlisten(id, wait)) return;
          if ("value" in o) resolve(o.value);
          else reject(o.error);
        },
        // Found, not added: it may have ended before this wait began, and then no event comes. It was listened for
        // before the add, so one look settles it: a job still going ends with its event.
        found: () => void this.lookUp(wait),
      };
      if (this.waits.size === 0) this.idle.progress(); // jobs begin to wait: a new stretch
      const same = this.waits.get(id);
      if (same) same.add(wait);
      else this.waits.set(id, new Set([wait]));
      add().then(
        () => {
          wait.added = true;
        },
        (error: Error) => wait.end({ error }),
      );
    });
  }

  /**
   * Ends the waits whose jobs ended without their event reaching this queue. The queue's stream keeps its last
   * EVENTS_KEPT events, so a coordinator paused for longer (a suspended machine, a long partition) misses some; a
   * Redis restarted without its data has lost the jobs themselves. Without this such a wait never ended, and the run
   * with it.
   */
  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const before = Date.now() - this.sweepSec * 1000;
      const due = this.allWaits().filter((w) => w.added && w.since <= before);
      for (let i = 0; i < due.length; i += 100) await Promise.all(due.slice(i, i + 100).map((w) => this.lookUp(w)));
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * Ends `wait` as its job ended, or with an error when the queue no longer has it; a job still going (or failed
   * with attempts left) is left. One script whatever the queue's length (BullMQ's `isFinished`: the job's key, its
   * score in the completed and failed sets, its return value or failure).
   */
  private async lookUp(wait: Wait): Promise<void> {
    let answer: number | [number, string | null];
    try {
      answer = await this.queue.getBackend().isFinished(wait.id, true);
    } catch {
      return; // Redis unreachable for now: the next sweep asks again
    }
    const [status, text] = Array.isArray(answer) ? answer : [answer, null];
    if (status === 1) wait.end({ value: parseReturn(text) });
    else if (status === 2) wait.end({ error: new JobFailed(text ?? "it failed") });
    else if (status === -1)
      wait.end({ error: new Error("it is no longer in the queue (was the queue's Redis emptied or restarted?)") });
  }

  /** Takes `wait` out of the waits: false when it had ended already. */
  private unlisten(id: string, wait: Wait): boolean {
    const same = this.waits.get(id);
    if (!same?.delete(wait)) return false;
    if (same.size === 0) this.waits.delete(id);
    return true;
  }

  private allWaits(): Wait[] {
    return [...this.waits.values()].flatMap((same) => [...same]);
  }

  /**
   * Names the packages of one batch of jobs by digest: each folder's files are put into Redis under `packageKey` once
   * per batch, where they stay PACKAGE_TTL_SEC past the last batch that named them (a job still queued when its
   * coordinator restarts is named again by the restarted one's batch). A package that cannot be put there is the
   * error of the jobs that name it.
   */
  batch(): (dir: string) => Promise<JobHarness | { failed: string }> {
    const put = new Map<string, Promise<JobHarness | { failed: string }>>();
    return (dir) => {
      let harness = put.get(dir);
      if (!harness) {
        harness = this.publish(dir).catch((err: unknown) => ({
          failed: `the harness package in ${dir} could not be put into the queue: ${(err as Error).message}`,
        }));
        put.set(dir, harness);
      }
      return harness;
    };
  }

  private async publish(dir: string): Promise<JobHarness> {
    let pkg = this.packed.get(dir);
    if (!pkg) {
      const files = packDir(dir);
      pkg = { digest: packageDigest(files), json: JSON.stringify(files) };
      this.packed.set(dir, pkg);
    }
    const client = await this.queue.getBackend().client;
    await client.set(this.queue.toKey(packageKey(pkg.digest)), pkg.json, { EX: PACKAGE_TTL_SEC });
    return { digest: pkg.digest };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.idle.stop();
    clearTimeout(this.forgetting);
    const closing = new Error("the coordinator closed its queue before the job ended");
    for (const wait of this.allWaits()) wait.end({ error: closing });
    this.starting?.disconnect();
    const graceful = (async () => {
      await this.forgetTaken();
      await this.janitor?.quit();
      await this.listening?.close();
      await this.queue.close();
    })().then(
      () => true,
      () => true,
    );
    // A Redis that does not answer would hold their QUIT for ever (and BullMQ's disconnect waits for an end that a
    // connection still retrying may never reach): past a bound they are dropped, not waited for.
    const wait = new Promise<boolean>((r) => setTimeout(() => r(false), CLOSE_WAIT_MS).unref());
    if (!(await Promise.race([graceful, wait]))) {
      this.janitor?.disconnect();
      for (const c of [this.listening, this.queue]) c?.disconnect().catch(() => undefined);
    }
  }
}

/** A job's return value as Redis holds it (JSON); what does not parse is no result (the runners say so). */
function parseReturn(text: string | null): unknown {
  try {
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
