import ivm from "isolated-vm";
import { BOOTSTRAP, LOOKUP } from "./bootstrap.ts";

export interface SandboxLimits {
  /** Heap limit of the isolate (MB). */
  memoryMb: number;
  /** CPU time for the synchronous part of one call. */
  cpuMs: number;
  /** Wall-clock limit of one call, covering promises that never settle. */
  wallMs: number;
  /** Largest JSON result accepted. */
  maxResultChars: number;
}

export const defaultLimits: SandboxLimits = { memoryMb: 32, cpuMs: 1000, wallMs: 5000, maxResultChars: 100_000 };

/** Host functions a tool's ctx reaches; all take and return JSON text, so only copies cross the boundary. */
export interface ToolHost {
  program(): string;
  stage(editJson: string): string;
  probe(): Promise<string>;
  evaluate(): Promise<string>;
  taskJson: string;
}

export type CallFailure = { ok: false; kind: "throw" | "timeout" | "memory" | "output"; error: string };
export type CallResult = { ok: true; value: unknown } | CallFailure;

/**
 * One generated module (a tool or a middleware) in its own isolate. The module is compiled once and kept across
 * calls of a rollout; after a timeout or out-of-memory the isolate is thrown away and rebuilt on the next call.
 */
export class SandboxModule {
  private isolate: ivm.Isolate | undefined;
  private invoke: ivm.Reference<(name: string, argsJson: string) => Promise<string>> | undefined;

  constructor(
    readonly source: string,
    readonly filename: string,
    readonly limits: SandboxLimits = defaultLimits,
    private readonly host?: ToolHost,
    private readonly seed = 0,
  ) {}

  private async start(): Promise<void> {
    const isolate = new ivm.Isolate({ memoryLimit: this.limits.memoryMb });
    const context = await isolate.createContext();
    const g = context.global;
    const h = this.host;
    await g.set("__hone_host_seed", this.seed);
    if (h) {
      await g.set("__hone_host_program", new ivm.Callback(() => h.program()));
      await g.set("__hone_host_stage", new ivm.Callback((json: string) => h.stage(String(json))));
      // Async host work goes through References called with a promise result; the bootstrap keeps them private.
      await g.set("__hone_host_probe", new ivm.Reference(() => h.probe()));
      await g.set("__hone_host_evaluate", new ivm.Reference(() => h.evaluate()));
      await g.set("__hone_host_task", h.taskJson);
    }
    await (await isolate.compileScript(BOOTSTRAP, { filename: "hone-bootstrap.js" })).run(context, { timeout: 1000 });
    const user = await isolate.compileScript(this.source, { filename: this.filename });
    await user.run(context, { timeout: this.limits.cpuMs });
    await (await isolate.compileScript(LOOKUP, { filename: "hone-lookup.js" })).run(context, { timeout: 1000 });
    this.invoke = await g.get("__hone_invoke", { reference: true });
    this.isolate = isolate;
  }

  private reset(): void {
    try {
      if (this.isolate && !this.isolate.isDisposed) this.isolate.dispose();
    } catch {
      // already gone
    }
    this.isolate = undefined;
    this.invoke = undefined;
  }

  /** Calls a top-level function of the module with JSON arguments; never throws. */
  async call(name: string, args: unknown[]): Promise<CallResult> {
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!this.isolate || this.isolate.isDisposed) await this.start();
      const invoke = this.invoke as NonNullable<typeof this.invoke>;
      const wall = new Promise<CallFailure>((resolve) => {
        timer = setTimeout(
          () => resolve({ ok: false, kind: "timeout", error: `did not finish within ${this.limits.wallMs} ms (wall clock)` }),
          this.limits.wallMs,
        );
      });
      const run = invoke
        .apply(undefined, [name, JSON.stringify(args)], {
          timeout: this.limits.cpuMs,
          arguments: { copy: true },
          result: { promise: true, copy: true },
        })
        .then((text): CallResult => {
          const s = String(text);
          if (s.length > this.limits.maxResultChars)
            return {
              ok: false,
              kind: "output",
              error: `returned ${s.length} characters of output; the limit is ${this.limits.maxResultChars}`,
            };
          return { ok: true, value: JSON.parse(s) };
        });
      const result = await Promise.race([run, wall]);
      if (!result.ok && result.kind === "timeout") this.reset();
      run.catch(() => {});
      return result;
    } catch (err) {
      return this.failure(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(err: unknown): CallFailure {
    const message = err instanceof Error ? err.message : String(err);
    const disposed = this.isolate?.isDisposed ?? true;
    if (/memory limit|out of memory|allocation failed/i.test(message) || (disposed && /disposed/i.test(message))) {
      this.reset();
      return { ok: false, kind: "memory", error: `ran out of memory (limit ${this.limits.memoryMb} MB)` };
    }
    if (/timed out/i.test(message)) {
      this.reset();
      return { ok: false, kind: "timeout", error: `used more than ${this.limits.cpuMs} ms of CPU time` };
    }
    return { ok: false, kind: "throw", error: message.split("\n")[0]?.slice(0, 500) ?? "failed" };
  }

  dispose(): void {
    this.reset();
  }
}
