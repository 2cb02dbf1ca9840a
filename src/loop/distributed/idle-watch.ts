import { withoutPassword } from "../../secret-url.ts";

// A coordinator whose jobs wait on a queue no hone worker serves said nothing: a run started with --queue before its
// workers (or with a typo in the workers' URL) sat on "rolling out" for ever. This says so, once per such stretch.

/** How long jobs wait without any worker's progress before the queue's workers are counted. */
export const IDLE_NOTICE_SEC = 10;

export interface IdleWatchOptions {
  url: string;
  /** How many of this coordinator's jobs are waiting now. */
  waiting: () => number;
  /** How many workers are connected to the queue (BullMQ's count, from Redis's client list). */
  workers: () => Promise<number>;
  say: (text: string) => void;
  afterSec?: number;
}

/**
 * Says, once per stretch, that this coordinator's jobs wait and no hone worker is connected to take them. Only a
 * count of none is said: workers that are connected but slow (long rollouts, other runs' jobs) are not a fault, and
 * a Redis that does not list its clients (a managed one) is counted as served.
 */
export class IdleWatch {
  private last = Date.now();
  private said = false;
  private countedAt = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly o: IdleWatchOptions) {}

  start(): void {
    this.timer ??= setInterval(() => void this.check(), this.afterMs() / 4);
    this.timer.unref();
  }

  /** A worker took or finished a job (any run's), or jobs begin to wait after none did: the stretch starts anew. */
  progress(): void {
    this.last = Date.now();
    this.said = false;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private afterMs(): number {
    return (this.o.afterSec ?? IDLE_NOTICE_SEC) * 1000;
  }

  private async check(): Promise<void> {
    const waiting = this.o.waiting();
    if (waiting === 0) return this.progress();
    const now = Date.now();
    // Counted at most once per stretch's length: workers connected at one count may be gone at the next.
    if (this.said || now - this.last < this.afterMs() || now - this.countedAt < this.afterMs()) return;
    this.countedAt = now;
    const workers = await this.o.workers().catch(() => undefined);
    if (workers !== 0 || this.said) return;
    this.said = true;
    const url = withoutPassword(this.o.url);
    this.o.say(
      `no hone worker is connected to the queue at ${url}; ${waiting} job(s) wait for one (start one: npx hone worker --queue ${url})`,
    );
  }
}
