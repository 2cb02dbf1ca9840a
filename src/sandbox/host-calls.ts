import type { WallClock } from "./wall-clock.ts";

/** Host functions a tool's ctx reaches; all take and return JSON text, so only copies cross the boundary. */
export interface ToolHost {
  program(): string;
  stage(editJson: string): string;
  probe(): Promise<string>;
  evaluate(): Promise<string>;
  taskJson: string;
  /** Drops the probes and evaluations still waiting for their turn (never started, never charged). */
  dropWaiting?(): void;
}

const lateCall = (what: string) => `ctx.${what}() was called after the call returned; await every ctx call before returning`;

/**
 * The ctx functions as the isolate calls them (synchronously, through isolated-vm Callbacks): they act only while a
 * call is open. probe() and evaluate() answer a ticket at once and run on the host; when one finishes, its JSON is
 * delivered back into the isolate while the call is still open, and dropped otherwise. Every started ctx call is
 * tracked until it settles, so a call never returns (and a rollout never ends) with one still running.
 */
export class HostCalls {
  private isOpen = false;
  private wall: WallClock | undefined;
  private tickets = 0;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly host: ToolHost,
    private readonly maxEditJson: number,
    private readonly deliver: (ticket: number, json: string) => void,
  ) {}

  get taskJson(): string {
    return this.host.taskJson;
  }

  open(wall: WallClock): void {
    this.isOpen = true;
    this.wall = wall;
  }

  close(): void {
    this.isOpen = false;
    this.wall = undefined;
  }

  program(): string {
    return this.host.program();
  }

  stage(json: unknown): string {
    if (!this.isOpen) return JSON.stringify({ ok: false, error: lateCall("stageEdit") });
    const text = typeof json === "string" ? json : "";
    if (text.length > this.maxEditJson) return JSON.stringify({ ok: false, error: "the edit is too large" });
    return this.host.stage(text);
  }

  /** Starts probe or evaluate: a ticket number, or the JSON of a refusal. */
  start(kind: unknown): number | string {
    if (kind !== "probe" && kind !== "evaluate") return JSON.stringify({ error: "unknown ctx call" });
    if (!this.isOpen) return JSON.stringify({ error: lateCall(kind) });
    const ticket = ++this.tickets;
    const wall = this.wall;
    wall?.hostCallStarted();
    let started: Promise<string>;
    try {
      started = kind === "probe" ? this.host.probe() : this.host.evaluate();
    } catch (err) {
      started = Promise.reject(err);
    }
    const tracked = started
      .then(
        (json) => json,
        (err: unknown) => JSON.stringify({ error: `ctx.${kind}() failed: ${err instanceof Error ? err.message : String(err)}` }),
      )
      .then((json) => {
        this.pending.delete(tracked);
        wall?.hostCallEnded();
        if (this.isOpen && this.wall === wall) this.deliver(ticket, json);
      });
    this.pending.add(tracked);
    return ticket;
  }

  /** A call cut short at a limit: its ctx calls still waiting for their turn never start. */
  dropWaiting(): void {
    this.host.dropWaiting?.();
  }

  /** Resolves once no ctx call is running. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
