/**
 * The wall-clock limit of one call: it runs while the module's code runs or waits, and stops while a ctx call
 * (probe, evaluate) is running on the host, since the evaluator's own timeout bounds those. `expired` resolves once
 * the limit is passed.
 */
export class WallClock {
  readonly expired: Promise<void>;
  private resolve: () => void = () => {};
  private timer: NodeJS.Timeout | undefined;
  private used = 0;
  private since: number | undefined;
  private hostCalls = 0;
  private stopped = false;

  constructor(private readonly limitMs: number) {
    this.expired = new Promise((r) => {
      this.resolve = r;
    });
    this.start();
  }

  private start(): void {
    this.since = performance.now();
    this.timer = setTimeout(
      () => {
        this.stop();
        this.resolve();
      },
      Math.max(0, this.limitMs - this.used),
    );
  }

  /** A ctx call started on the host: the clock stops until no ctx call is running. */
  hostCallStarted(): void {
    if (this.stopped || this.hostCalls++ > 0) return;
    clearTimeout(this.timer);
    this.used += performance.now() - (this.since ?? performance.now());
  }

  hostCallEnded(): void {
    if (this.stopped || --this.hostCalls > 0) return;
    this.start();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
