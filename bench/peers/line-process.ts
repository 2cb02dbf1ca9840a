// A long-lived child process spoken to in JSON lines: one request line in, one answer line out, in order.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export class LineProcess {
  private readonly child: ChildProcess;
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(command: string, args: string[]) {
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
    if (!this.child.stdout) throw new Error(`${command}: no stdout`);
    createInterface({ input: this.child.stdout }).on("line", (line) => this.waiting.shift()?.(line));
  }

  /** The next line the process writes (its ready line, or the answer to the request before). */
  next(): Promise<unknown> {
    return new Promise((resolve) => this.waiting.push((line) => resolve(JSON.parse(line))));
  }

  ask(request: unknown): Promise<unknown> {
    const answer = this.next();
    this.child.stdin?.write(`${JSON.stringify(request)}\n`);
    return answer;
  }

  close(): void {
    this.child.stdin?.end();
    this.child.kill();
  }
}
