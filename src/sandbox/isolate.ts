import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import type ivm from "isolated-vm";

// The native module loads with the first isolate, not with every command whose modules import this one.
let ivmModule: typeof ivm | undefined;
const lib = (): typeof ivm => {
  ivmModule ??= createRequire(import.meta.url)("isolated-vm") as typeof ivm;
  return ivmModule;
};

import { MAX_EDIT_CHARS } from "../task/evolve-block.ts";
import { BOOTSTRAP } from "./bootstrap.ts";
import { HostCalls, type ToolHost } from "./host-calls.ts";
import { WallClock } from "./wall-clock.ts";

export type { ToolHost } from "./host-calls.ts";

export interface SandboxLimits {
  /** Heap limit of the isolate (MB). */
  memoryMb: number;
  /** CPU time of one call, every slice of it (before and after each await). */
  cpuMs: number;
  /** Wall-clock limit of one call, covering promises that never settle; ctx calls running on the host do not count. */
  wallMs: number;
  /** Largest JSON result accepted. */
  maxResultChars: number;
}

export const defaultLimits: SandboxLimits = { memoryMb: 32, cpuMs: 1000, wallMs: 5000, maxResultChars: 100_000 };

/** The JSON text of an edit passed to ctx.stageEdit: the edit cap with room for JSON escapes. */
export const MAX_EDIT_JSON = 2 * MAX_EDIT_CHARS + 4096;

export type CallFailure = { ok: false; kind: "throw" | "timeout" | "memory" | "output"; error: string };
export type CallResult = { ok: true; value: unknown } | CallFailure;

/** How long a call waits for an abandoned isolate of its module to end before it fails without running. */
const STUCK_GRACE_MS = 1000;

/**
 * The operations of abandoned isolates still running, in this whole process. Each spins a thread in native code that
 * nothing in-process can stop (one module holds at most one, but every rollout builds its own modules), so past one
 * per core no generated code starts until some end: the host's CPU stays bounded whatever a package does.
 */
const abandoned = new Set<Promise<unknown>>();
export const MAX_ABANDONED = Math.max(1, availableParallelism());
/** How many abandoned isolates' operations are still running in this process. */
export const abandonedRunning = (): number => abandoned.size;
const tooManyStuck = (): CallFailure | undefined =>
  abandoned.size >= MAX_ABANDONED
    ? {
        ok: false,
        kind: "timeout",
        error: `not run: ${abandoned.size} earlier calls of generated code passed their limits inside long native operations that are still ending (at most ${MAX_ABANDONED} at once, one per core)`,
      }
    : undefined;
const cutShort: CallFailure = { ok: false, kind: "timeout", error: "stopped at the rollout's time limit" };

type Entry = ivm.Reference<(op: string, a?: unknown, b?: unknown, c?: unknown) => unknown>;
type Op = [string, unknown?, unknown?, unknown?];

interface CurrentCall {
  id: number;
  cpuStart: bigint;
  done: (r: CallResult) => void;
  /** A limit passed by any operation of the call, even after its entry settled (trailing microtasks). */
  broke?: CallFailure;
}

/**
 * One generated module (a tool or a middleware) in its own isolate, loaded once and kept across the calls of a
 * rollout. The module's code runs only inside operations the host starts one at a time (load, invoke, and the
 * delivery of each finished ctx call), each under isolated-vm's timeout for what is left of the call's CPU time,
 * so the limit holds across awaits. A call ends when its entry function settles; then its last microtasks have run,
 * and ctx calls it left unawaited are waited for (they finish one at a time and are charged, their results are not
 * delivered; past a limit, those still waiting for their turn are dropped uncharged).
 * The wall clock also covers time spent in synchronous ctx calls (ctx.program, ctx.stageEdit), which the isolate's
 * CPU time does not count. After a timeout or out-of-memory the isolate is disposed (an operation still queued then
 * checks for disposal before running any code) and rebuilt on the next call.
 *
 * Some built-ins run long stretches of native code that V8 does not interrupt (indexOf or reverse over an array of
 * length 2^32-1, BigInt toString or division of numbers of millions of digits: tens of seconds each), so neither the
 * CPU limit nor disposal stops them at once. The wall clock therefore never waits for the isolate's thread: at the
 * limit the call fails, its operations are abandoned with the disposed isolate, and the next call starts a new one.
 * While an abandoned isolate is still stuck, the module's next calls fail at once (after a short grace), so a module
 * never has more than one such thread; nothing the abandoned isolate does afterwards reaches the host.
 */
export class SandboxModule {
  private isolate: ivm.Isolate | undefined;
  private entry: Entry | undefined;
  private lane: Promise<unknown> = Promise.resolve();
  private calling: Promise<unknown> = Promise.resolve();
  private calls = 0;
  private current: CurrentCall | undefined;
  /** Settles once the operations of an abandoned isolate (disposed mid-operation) have ended. */
  private stuck: Promise<void> | undefined;
  private readonly host: HostCalls | undefined;

  constructor(
    readonly source: string,
    readonly filename: string,
    readonly limits: SandboxLimits = defaultLimits,
    host?: ToolHost,
    private readonly seed = 0,
  ) {
    this.host = host ? new HostCalls(host, MAX_EDIT_JSON, (ticket, json) => this.deliver(ticket, json)) : undefined;
  }

  /**
   * Calls a top-level function of the module with JSON arguments; never throws. Calls run one after another. An
   * aborted `signal` (the rollout's deadline) ends the call as its wall clock would.
   */
  call(name: string, args: unknown[], signal?: AbortSignal): Promise<CallResult> {
    const next = this.calling.then(() => this.callNow(name, args, signal)).catch((err: unknown) => this.failure(err));
    this.calling = next;
    return next;
  }

  private async callNow(name: string, args: unknown[], signal?: AbortSignal): Promise<CallResult> {
    const stuck = (await this.stillStuck()) ?? tooManyStuck();
    if (stuck) return stuck;
    if (signal?.aborted) return cutShort;
    const wall = new WallClock(this.limits.wallMs);
    const wallFailure: CallFailure = {
      ok: false,
      kind: "timeout",
      error: `did not finish within ${this.limits.wallMs} ms (wall clock)`,
    };
    let onAbort: (() => void) | undefined;
    try {
      if (!this.isolate || this.isolate.isDisposed || !this.entry) {
        // Loading runs the module's top level: under the same wall clock and deadline, never waited for past them.
        const ended = new Promise<CallFailure>((resolve) => {
          void wall.expired.then(() => resolve(wallFailure));
          onAbort = () => resolve(cutShort);
          signal?.addEventListener("abort", onAbort, { once: true });
        });
        const started = await Promise.race([this.start(), ended]);
        if (onAbort) signal?.removeEventListener("abort", onAbort);
        if (!started.ok) {
          if (started === wallFailure || started === cutShort) this.reset(true);
          return started;
        }
      }
      const isolate = this.isolate as ivm.Isolate;
      const id = ++this.calls;
      let settle: (r: CallResult) => void = () => {};
      const done = new Promise<CallResult>((r) => {
        settle = r;
      });
      const call: CurrentCall = { id, done: settle, cpuStart: isolate.cpuTime };
      // Even mid-operation: an operation still queued checks for disposal before it runs any code, and one that is
      // running is abandoned with its isolate (see reset).
      const expire = (failure: CallFailure) => {
        call.broke ??= failure;
        call.done(call.broke);
        this.host?.dropWaiting();
        this.reset(true);
      };
      this.current = call;
      this.host?.open(wall);
      void wall.expired.then(() => expire(wallFailure));
      onAbort = () => expire(cutShort);
      signal?.addEventListener("abort", onAbort, { once: true });
      void this.segment(["invoke", id, name, JSON.stringify(args)]);
      return await this.finish(call, await done, wall);
    } finally {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      wall.stop();
      this.current = undefined;
    }
  }

  /** Waits briefly for an abandoned isolate to end; a failure when it is still running native code. */
  private async stillStuck(): Promise<CallFailure | undefined> {
    const stuck = this.stuck;
    if (!stuck) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      stuck.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), Math.min(STUCK_GRACE_MS, this.limits.wallMs));
      }),
    ]);
    clearTimeout(timer);
    if (ended) return undefined;
    return {
      ok: false,
      kind: "timeout",
      error:
        "not run: an earlier call of this module passed its limits inside a long native operation (such as indexOf over a huge array or BigInt arithmetic on huge numbers) that the sandbox is still stopping",
    };
  }

  /** After the entry settled or a limit was passed: no more deliveries, wait for the lane and the host's ctx calls. */
  private async finish(call: CurrentCall, outcome: CallResult, wall: WallClock): Promise<CallResult> {
    this.host?.close();
    // Trailing operations are waited for only until the wall clock (which then abandons them with the isolate).
    await Promise.race([this.lane, wall.expired]);
    this.current = undefined;
    // Unawaited ctx calls of a call that ended normally run and are charged; past a limit, those not yet started never do.
    if (call.broke) this.host?.dropWaiting();
    await this.host?.settle();
    const final = call.broke ?? outcome;
    if (!final.ok && (final.kind === "timeout" || final.kind === "memory")) this.reset();
    return final;
  }

  private async start(): Promise<CallResult> {
    this.reset();
    const isolate = new (lib().Isolate)({ memoryLimit: this.limits.memoryMb });
    this.isolate = isolate;
    const gone: CallFailure = { ok: false, kind: "timeout", error: "the sandbox was stopped while loading" };
    try {
      const context = await isolate.createContext();
      const script = await isolate.compileScript(BOOTSTRAP, { filename: "hone-bootstrap.js" });
      const init = (await script.run(context, { reference: true, timeout: 1000 })) as ivm.Reference;
      const hostArgs = this.hostArgs(isolate) as ivm.ArgumentType<object, unknown>[];
      const entry = (await init.apply(undefined, hostArgs, { result: { reference: true }, timeout: 1000 })) as Entry;
      init.release();
      if (this.isolate !== isolate) return gone;
      this.entry = entry;
    } catch (err) {
      const failed = this.failure(err);
      if (this.isolate === isolate) this.reset();
      return failed;
    }
    const load: CurrentCall = { id: 0, done: () => {}, cpuStart: isolate.cpuTime };
    this.current = load;
    const loaded = await this.segment(["load", this.source]);
    if (this.current === load) this.current = undefined;
    if (this.isolate !== isolate) return loaded.ok ? gone : loaded;
    if (!loaded.ok) this.reset();
    return loaded;
  }

  /** The host functions handed to the bootstrap (never put on the isolate's global object). */
  private hostArgs(isolate: ivm.Isolate): unknown[] {
    const tail = [this.seed, this.limits.maxResultChars, MAX_EDIT_JSON];
    // An abandoned isolate (see reset) reaches nothing: its callbacks answer as if the call had returned.
    const live = () => this.isolate === isolate && !isolate.isDisposed;
    const done = new (lib().Callback)((callId: unknown, envelope: unknown) => {
      if (!live() || !this.current || this.current.id !== callId) return;
      this.host?.close();
      this.current.done(this.decode(envelope));
    });
    const h = this.host;
    if (!h) return [undefined, undefined, undefined, done, undefined, ...tail];
    const stale = JSON.stringify({ ok: false, error: "the call has ended" });
    return [
      new (lib().Callback)(() => (live() ? h.program() : "")),
      new (lib().Callback)((json: unknown) => (live() ? h.stage(json) : stale)),
      new (lib().Callback)((kind: unknown) => (live() ? h.start(kind) : JSON.stringify({ error: "the call has ended" }))),
      done,
      h.taskJson,
      ...tail,
    ];
  }

  private deliver(ticket: number, json: string): void {
    if (this.current) void this.segment(["deliver", ticket, json]);
  }

  /**
   * One synchronous operation of the bootstrap, queued behind the others, under a timeout of what is left of the
   * current call's CPU time (isolated-vm's timeout covers the operation's microtasks too).
   */
  private segment(op: Op): Promise<CallResult> {
    // Bound to the isolate and call it was queued for: once reset abandons them, it never runs in their successors.
    const isolate = this.isolate;
    const entry = this.entry;
    const call = this.current;
    const run = this.lane.then(async (): Promise<CallResult> => {
      if (!isolate || isolate.isDisposed || !entry) return { ok: false, kind: "throw", error: "the sandbox is gone" };
      const used = call ? Number(isolate.cpuTime - call.cpuStart) / 1e6 : 0;
      const left = Math.floor(this.limits.cpuMs - used);
      if (left < 1) {
        const spent: CallFailure = { ok: false, kind: "timeout", error: `used more than ${this.limits.cpuMs} ms of CPU time` };
        if (call) {
          call.broke ??= spent;
          call.done(spent);
        }
        return spent;
      }
      let result: CallResult;
      try {
        const value = await entry.apply(undefined, op, { timeout: left, arguments: { copy: true }, result: { copy: true } });
        result = op[0] === "load" ? this.decode(value) : { ok: true, value };
      } catch (err) {
        result = this.failure(err);
      }
      if (call && !result.ok && (result.kind === "timeout" || result.kind === "memory")) {
        call.broke ??= result;
        call.done(result);
      }
      return result;
    });
    this.lane = run;
    return run;
  }

  private decode(envelope: unknown): CallResult {
    const text = typeof envelope === "string" ? envelope : "";
    const body = text.slice(1);
    if (text[0] === "v") {
      if (body.length > this.limits.maxResultChars)
        return {
          ok: false,
          kind: "output",
          error: `returned more output than the limit of ${this.limits.maxResultChars} characters`,
        };
      try {
        return { ok: true, value: JSON.parse(body) };
      } catch {
        return { ok: false, kind: "output", error: "returned output that is not JSON" };
      }
    }
    if (text[0] === "o") return { ok: false, kind: "output", error: body };
    if (text[0] === "e") return { ok: false, kind: "throw", error: body.slice(0, 500) || "failed" };
    return { ok: false, kind: "throw", error: "the sandbox answered nothing" };
  }

  /**
   * Disposes the isolate. An operation still running in it (native code V8 does not interrupt) is abandoned: the
   * lane starts afresh, and `stuck` settles once that operation has ended; `abandoning` (a limit passed mid-call)
   * counts it among the process's abandoned operations until then.
   */
  private reset(abandoning = false): void {
    const lane = this.lane;
    this.lane = Promise.resolve();
    // Counted only when a limit cuts an operation off: an idle module's reset (a start, a dispose) abandons nothing,
    // and counting its settled lane for a moment would refuse other modules' calls by the clock, which a replay
    // cannot reproduce.
    if (abandoning) {
      abandoned.add(lane);
      void lane.finally(() => abandoned.delete(lane)).catch(() => undefined);
    }
    const stuck: Promise<void> = Promise.allSettled([lane, this.stuck]).then(() => {
      if (this.stuck === stuck) this.stuck = undefined;
    });
    this.stuck = stuck;
    try {
      if (this.isolate && !this.isolate.isDisposed) this.isolate.dispose();
    } catch {
      // already gone
    }
    this.isolate = undefined;
    this.entry = undefined;
  }

  /** Errors raised by isolated-vm itself (never the module's values, which the bootstrap turns into strings). */
  private failure(err: unknown): CallFailure {
    const message = err instanceof Error ? err.message : String(err);
    const disposed = this.isolate?.isDisposed ?? true;
    if (/memory limit|out of memory|allocation failed/i.test(message) || (disposed && /disposed/i.test(message)))
      return { ok: false, kind: "memory", error: `ran out of memory (limit ${this.limits.memoryMb} MB)` };
    if (/timed out/i.test(message))
      return { ok: false, kind: "timeout", error: `used more than ${this.limits.cpuMs} ms of CPU time` };
    return { ok: false, kind: "throw", error: message.split("\n")[0]?.slice(0, 500) || "failed" };
  }

  /** Disposes the isolate once whatever runs in it has finished. */
  dispose(): void {
    void this.lane.then(() => this.reset());
  }
}
