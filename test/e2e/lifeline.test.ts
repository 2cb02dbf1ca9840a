import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentCliEstimator } from "../../src/method/estimators.ts";
import { runProcess } from "../../src/task/python-process.ts";
import { SURVIVOR_MARK, survivors } from "../helpers/attacks.ts";
import { startFakeVllm } from "../helpers/fake-vllm.ts";
import { makeTask, ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/processes.ts";

// A LoRA trainer or an agent CLI may run for hours, and without bubblewrap nothing else ends a cold evaluation or a
// program run sealed: when hone is killed outright (SIGKILL, the OOM killer), which no handler of hone's sees, or
// stopped, they and everything they started must end with it, not hold a GPU or a core on.

/** A command that starts two helpers of its own and waits on them, as a launcher does its workers. */
const LAUNCHER = `sleep 300 ${SURVIVOR_MARK} & sleep 300 ${SURVIVOR_MARK}; wait`;

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  for (const pid of survivors()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
});

/** Runs `hone args` until the launcher's two helpers are up, sends hone `signal`, and says whether they went too. */
async function killHoneMidCommand(
  args: string[],
  signal: NodeJS.Signals = "SIGKILL",
): Promise<{ started: boolean; gone: boolean; output: string }> {
  const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c) => (output += c));
  child.stderr.on("data", (c) => (output += c));
  const started = await eventually(() => survivors().length === 2 || child.exitCode !== null, 120_000);
  const up = survivors().length === 2;
  child.kill(signal);
  await new Promise((r) => child.once("close", r));
  return { started: started && up, gone: await eventually(() => survivors().length === 0, 5000), output };
}

/**
 * Runs `script` in a node process of its own without bubblewrap (HONE_NO_BWRAP=1) until two marked helpers run, kills
 * that process with SIGKILL, and expects the helpers gone at once (no grace).
 */
async function killNodeMidWork(script: string): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    env: { ...process.env, HONE_NO_BWRAP: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let output = "";
  child.stderr.on("data", (c) => (output += c));
  expect(await eventually(() => survivors().length === 2, 30_000), output).toBe(true);
  child.kill("SIGKILL");
  await new Promise((r) => child.once("close", r));
  expect(await eventually(() => survivors().length === 0, 2000)).toBe(true);
}

describe("a long command's lifeline", () => {
  it("passes the command's exit status, code or signal, and keeps the lifeline from it", async () => {
    const opts = { cwd: tempDir(), env: process.env, timeoutMs: 10_000, lifeline: { graceSec: 10 } };
    expect(await runProcess("sh", ["-c", "echo hi; exit 7"], opts)).toMatchObject({ code: 7, signal: null, stdout: "hi\n" });
    expect(await runProcess("sh", ["-c", "kill -TERM $$"], opts)).toMatchObject({ code: null, signal: "SIGTERM" });
    // The lifeline is descriptor 3 of the shell that runs the command, closed for the command itself.
    const fds = await runProcess("sh", ["-c", "[ -e /proc/$$/fd/3 ] && echo leaked || echo closed"], opts);
    expect(fds.stdout).toBe("closed\n");
  });

  it("a program run sealed without bubblewrap ends at once with the process that ran it, killed by SIGKILL", async () => {
    // bubblewrap's --die-with-parent ends a sandbox with hone; without it (HONE_NO_BWRAP=1) the lifeline does, with
    // no grace for a program hone does not trust (this one ignores SIGTERM).
    const dir = tempDir();
    const program = `trap '' TERM; sleep 300 ${SURVIVOR_MARK} & sleep 300 ${SURVIVOR_MARK}; wait`;
    const script = `
      const { runSealed } = await import(${JSON.stringify(join(ROOT, "src", "task", "sealed-command.ts"))});
      await runSealed({ argv: ["sh", "-c", ${JSON.stringify(program)}], readOnly: [], writable: [${JSON.stringify(dir)}],
        cwd: ${JSON.stringify(dir)}, env: {}, timeoutMs: 600000 });
    `;
    await killNodeMidWork(script);
  });

  it("a cold evaluation without bubblewrap ends at once with the process that ran it, killed by SIGKILL", async () => {
    // An evaluator that never returns (an upstream one that runs the program in its own process, say) and a process
    // it started: without bubblewrap's --die-with-parent, the lifeline ends both with hone.
    const task = makeTask(
      `import subprocess\ndef evaluate(program_path):\n    subprocess.Popen(['sleep', '300', '${SURVIVOR_MARK}'])\n    subprocess.run(['sleep', '300', '${SURVIVOR_MARK}'])\n`,
      { timeout: 600 },
    );
    const script = `
      const { loadTaskFolder } = await import(${JSON.stringify(join(ROOT, "src", "task", "discovery-task.ts"))});
      const { evaluateProgram } = await import(${JSON.stringify(join(ROOT, "src", "task", "evaluator.ts"))});
      await evaluateProgram(loadTaskFolder(${JSON.stringify(task)}), "X = 1\\n");
    `;
    await killNodeMidWork(script);
  });

  it("at its timeout a command gets SIGTERM first: a launcher ends the workers it started in sessions of their own", async () => {
    // As torchrun does: its workers run in sessions of their own, outside its group, and it ends them on SIGTERM.
    const launcher = `setsid sleep 300 ${SURVIVOR_MARK} & W=$!; trap 'kill $W; exit 0' TERM; sleep 300 & wait $!`;
    const ctx = { epoch: 1, incumbentDir: tempDir(), candidateDir: tempDir(), panelDescription: "2 gsm8k questions" };
    await expect(new AgentCliEstimator(launcher, 1).propose(ctx)).rejects.toThrow(/ran past its timeout \(1 s\)/);
    expect(await eventually(() => survivors().length === 0, 5000)).toBe(true);
  });

  it("an agent CLI of hone train ends when hone is stopped, with what it started that left hone's tree of processes", {
    timeout: 180_000,
  }, async () => {
    // A stop kills hone's descendants; a helper started in a subshell that ended is not one, but is in the group.
    const dir = tempDir();
    const data = join(ROOT, "test", "fixtures", "datasets");
    const orphaning = `(sleep 300 ${SURVIVOR_MARK} &); sleep 300 ${SURVIVOR_MARK}`;
    write(
      join(dir, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 2, data_dir: ${data}}\nestimator: {kind: agent_cli, command: "${orphaning}"}\ncriterion: {kind: strict_pareto}\n`,
    );
    const args = ["train", "--config", join(dir, "train.yaml"), "--epochs", "1", "--out", join(dir, "run")];
    const r = await killHoneMidCommand(args, "SIGTERM");
    expect(r.started, r.output).toBe(true);
    expect(r.gone).toBe(true);
  });

  it("an agent CLI of hone train ends with hone killed by SIGKILL, with every process it started", {
    timeout: 180_000,
  }, async () => {
    const dir = tempDir();
    const data = join(ROOT, "test", "fixtures", "datasets");
    write(
      join(dir, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 2, data_dir: ${data}}\nestimator: {kind: agent_cli, command: "${LAUNCHER}"}\ncriterion: {kind: strict_pareto}\n`,
    );
    const r = await killHoneMidCommand([
      "train",
      "--config",
      join(dir, "train.yaml"),
      "--epochs",
      "1",
      "--out",
      join(dir, "run"),
    ]);
    expect(r.started, r.output).toBe(true);
    expect(r.gone).toBe(true);
  });

  it("a LoRA trainer of hone optimize ends with hone killed by SIGKILL, with every process it started", {
    timeout: 180_000,
  }, async () => {
    const vllm = await startFakeVllm("qwen-base");
    close = vllm.close;
    const dir = tempDir();
    write(
      join(dir, "hone.yaml"),
      [
        "task: circle-packing",
        "rounds: 1",
        "proposals: 2",
        "max_evals: 1",
        "concurrency: 2",
        `proposer: {model: qwen-base, base_url: "${vllm.url}"}`,
        `learning: {mode: lora, lora: {trainer_command: "${LAUNCHER}"}}`,
        'cache: {mode: "off"}',
        "",
      ].join("\n"),
    );
    const r = await killHoneMidCommand(["optimize", "--config", join(dir, "hone.yaml"), "--out", join(dir, "run")]);
    expect(r.started, r.output).toBe(true);
    expect(r.gone).toBe(true);
  });
});
