import { createRequire } from "node:module";
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
 * and ctx calls it left unawaited are waited for (they finish and are charged, their results are not delivered).
 * The wall clock also covers time spent in synchronous ctx calls (ctx.program, ctx.stageEdit), which the isolate's
 * CPU time does not count. After a timeout or out-of-memory the isolate is disposed (an operation still queued then
 * checks for disposal before running any code) and rebuilt on the next call.
 */
export class SandboxModule {
  private isolate: ivm.Isolate | undefined;
  private entry: Entry | undefined;
  private lane: Promise<unknown> = Promise.resolve();
  private calling: Promise<unknown> = Promise.resolve();
  private calls = 0;
  private current: CurrentCall | undefined;
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

  /** Calls a top-level function of the module with JSON arguments; never throws. Calls run one after another. */
  call(name: string, args: unknown[]): Promise<CallResult> {
    const next = this.calling.then(() => this.callNow(name, args)).catch((err: unknown) => this.failure(err));
    this.calling = next;
    return next;
  }

  private async callNow(name: string, args: unknown[]): Promise<CallResult> {
    if (!this.isolate || this.isolate.isDisposed || !this.entry) {
      const started = await this.start();
      if (!started.ok) return started;
    }
    const isolate = this.isolate as ivm.Isolate;
    const id = ++this.calls;
    const wall = new WallClock(this.limits.wallMs);
    let settle: (r: CallResult) => void = () => {};
    const done = new Promise<CallResult>((r) => {
      settle = r;
    });
    const call: CurrentCall = { id, done: settle, cpuStart: isolate.cpuTime };
    this.current = call;
    this.host?.open(wall);
    try {
      void this.segment(["invoke", id, name, JSON.stringify(args)]);
      void wall.expired.then(() => {
        // Even mid-operation: an operation still queued checks for disposal before it runs any code.
        call.broke ??= {
          ok: false,
          kind: "timeout",
          error: `did not finish within ${this.limits.wallMs} ms (wall clock)`,
        };
        call.done(call.broke);
        this.reset();
      });
      return await this.finish(call, await done);
    } finally {
      wall.stop();
      this.current = undefined;
    }
  }

  /** After the entry settled or a limit was passed: no more deliveries, wait for the lane and the host's ctx calls. */
  private async finish(call: CurrentCall, outcome: CallResult): Promise<CallResult> {
    this.host?.close();
    await this.lane;
    this.current = undefined;
    await this.host?.settle();
    const final = call.broke ?? outcome;
    if (!final.ok && (final.kind === "timeout" || final.kind === "memory")) this.reset();
    return final;
  }

  private async start(): Promise<CallResult> {
    this.reset();
    const isolate = new (lib().Isolate)({ memoryLimit: this.limits.memoryMb });
    this.isolate = isolate;
    try {
      const context = await isolate.createContext();
      const script = await isolate.compileScript(BOOTSTRAP, { filename: "hone-bootstrap.js" });
      const init = (await script.run(context, { reference: true, timeout: 1000 })) as ivm.Reference;
      const hostArgs = this.hostArgs() as ivm.ArgumentType<object, unknown>[];
      this.entry = (await init.apply(undefined, hostArgs, { result: { reference: true }, timeout: 1000 })) as Entry;
      init.release();
    } catch (err) {
      const failed = this.failure(err);
      this.reset();
      return failed;
    }
    const cpuStart = isolate.cpuTime;
    this.current = { id: 0, done: () => {}, cpuStart };
    const loaded = await this.segment(["load", this.source]);
    this.current = undefined;
    if (!loaded.ok) this.reset();
    return loaded;
  }

  /** The host functions handed to the bootstrap (never put on the isolate's global object). */
  private hostArgs(): unknown[] {
    const tail = [this.seed, this.limits.maxResultChars, MAX_EDIT_JSON];
    const done = new (lib().Callback)((callId: unknown, envelope: unknown) => {
      if (!this.current || this.current.id !== callId) return;
      this.host?.close();
      this.current.done(this.decode(envelope));
    });
    const h = this.host;
    if (!h) return [undefined, undefined, undefined, done, undefined, ...tail];
    return [
      new (lib().Callback)(() => h.program()),
      new (lib().Callback)((json: unknown) => h.stage(json)),
      new (lib().Callback)((kind: unknown) => h.start(kind)),
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
    const run = this.lane.then(async (): Promise<CallResult> => {
      const isolate = this.isolate;
      const entry = this.entry;
      const call = this.current;
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

  private reset(): void {
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
