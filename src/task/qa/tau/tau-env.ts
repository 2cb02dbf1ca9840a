import { type ChildProcess, execFile, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { HoneError } from "../../../errors.ts";
import { isolationSupport, pythonInfo } from "../../python-env.ts";
import { bwrapArgs } from "../../sandbox-layout.ts";
import type { ToolWorld } from "../benchmark.ts";

export const TAU_DIR = dirname(fileURLToPath(import.meta.url));
const MAX_LINE = 16 << 20;
/** A tool call of τ-bench is a dictionary lookup or a short loop; one that takes this long has gone wrong. */
const CALL_TIMEOUT_MS = 60_000;

/** Where a task's environment comes from: the data folder, the domain, the tasks file and the task's index there. */
export interface TauTaskRef {
  dir: string;
  domain: "retail" | "airline";
  file: string;
  index: number;
}

/** The tasks of one τ-bench tasks file, read without running it (tau_tasks.py): index, user and instruction. */
export async function readTauTasks(path: string): Promise<{ index: number; user_id: string; instruction: string }[]> {
  const python = pythonInfo("python3").executable;
  try {
    const { stdout } = await promisify(execFile)(python, ["-I", join(TAU_DIR, "tau_tasks.py"), path], {
      maxBuffer: 64 << 20,
      timeout: 60_000,
    });
    return JSON.parse(stdout);
  } catch (err) {
    throw new HoneError(
      "badTask",
      `${path}: not a τ-bench tasks file (${(err as Error).message.split("\n").slice(-2).join(" ")})`,
    );
  }
}

/** A line-at-a-time conversation with the environment process; a reply that does not come is an error. */
class EnvProcess {
  private buffer = "";
  private waiting: ((line: string | Error) => void) | undefined;
  private ended: Error | undefined;

  constructor(private readonly child: ChildProcess) {
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.buffer += chunk;
      if (this.buffer.length > MAX_LINE) this.fail(new Error("the environment sent a line too large"));
      const i = this.buffer.indexOf("\n");
      if (i >= 0 && this.waiting) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 1);
        const w = this.waiting;
        this.waiting = undefined;
        w(line);
      }
    });
    child.on("exit", (code, signal) => this.fail(new Error(`the environment process ended (${signal ?? code})`)));
    child.on("error", (err) => this.fail(err));
    child.stdin?.on("error", () => {});
  }

  private fail(err: Error): void {
    this.ended ??= err;
    const w = this.waiting;
    this.waiting = undefined;
    w?.(err);
  }

  async ask(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.ended) throw this.ended;
    if (this.waiting) throw new Error("one environment request at a time");
    const reply = await new Promise<string | Error>((resolve) => {
      const timer = setTimeout(
        () => resolve(new Error(`the environment did not answer within ${CALL_TIMEOUT_MS / 1000} s`)),
        CALL_TIMEOUT_MS,
      );
      this.waiting = (line) => {
        clearTimeout(timer);
        resolve(line);
      };
      this.child.stdin?.write(`${JSON.stringify(message)}\n`);
    });
    if (reply instanceof Error) {
      this.close();
      throw reply;
    }
    const parsed = JSON.parse(reply) as Record<string, unknown>;
    if (parsed.ok !== true) throw new Error(`the environment refused ${String(message.op)}: ${String(parsed.error)}`);
    return parsed;
  }

  close(): void {
    this.child.kill("SIGKILL");
  }
}

function spawnEnv(dataDir: string): ChildProcess {
  const python = pythonInfo("python3");
  const script = [python.executable, "-I", join(TAU_DIR, "tau_env.py")];
  const env = { PATH: "/usr/bin:/bin", LANG: process.env.LANG ?? "C.UTF-8", PYTHONDONTWRITEBYTECODE: "1" };
  if (!isolationSupport().bwrap) return spawn(script[0] as string, script.slice(1), { env, stdio: ["pipe", "pipe", "ignore"] });
  const args = bwrapArgs({ python, readOnly: [TAU_DIR, dataDir], env }, script);
  return spawn("bwrap", args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdio: ["pipe", "pipe", "ignore"] });
}

const text = (v: unknown) => (typeof v === "string" ? v : v === null || v === undefined ? "None" : String(v));

/**
 * Opens one τ-bench task's environment: hone's port of its tools over the task's database, in a Python process of its
 * own (under bubblewrap where it works: the data folder and hone's port read-only, no network). The gold actions and
 * outputs stay in that process.
 */
export async function openTauWorld(ref: TauTaskRef): Promise<ToolWorld> {
  const proc = new EnvProcess(spawnEnv(ref.dir));
  try {
    const opened = await proc.ask({ op: "open", ...ref });
    return {
      tools: opened.tools as ToolWorld["tools"],
      policy: String(opened.wiki),
      call: async (name, rawArguments) => {
        const r = await proc.ask({ op: "tool", name, arguments: rawArguments });
        return { observation: text(r.observation), done: r.done === true };
      },
      respond: async (content) => {
        await proc.ask({ op: "respond", content });
      },
      oracle: async (kind) => {
        const r = await proc.ask({ op: "oracle", kind });
        return { observation: text(r.observation), done: true };
      },
      reward: async () => {
        const { ok: _ok, ...record } = await proc.ask({ op: "reward" });
        return JSON.stringify(record);
      },
      close: () => proc.close(),
    };
  } catch (err) {
    proc.close();
    throw new HoneError("badTask", `τ-bench ${ref.domain} task ${ref.index} in ${ref.dir}: ${(err as Error).message}`);
  }
}
