import type { Reporter, TestModule } from "vitest/node";

/**
 * After the default reporter: one line per reason tests were skipped for a missing tool (see requires.ts), so a
 * green `npm test` on a machine without redis-server, chromium, Slurm or bubblewrap says what did not run and why.
 */
export default class SkipReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const byReason = new Map<string, number>();
    for (const m of modules)
      for (const t of m.children.allTests()) {
        const r = t.result();
        if (r.state !== "skipped" || !t.meta().missingTool) continue;
        const reason = r.note ?? `${t.meta().missingTool} is missing`;
        byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
      }
    for (const [reason, n] of byReason) process.stdout.write(` skipped ${n} test(s): ${reason}\n`);
  }
}
