// Usage: node .ci/vitest-report.mjs REPORT.json all|fresh
// Reads vitest's JSON report and prints "N passed, N failed" (plus the skips). Exit 1 when anything failed, and:
//   all    (CI, every tool installed): any skipped test is a failure, above all one skipped for a missing tool;
//   fresh  (a fresh clone without the tools): a skip is fine only for a missing tool, and each of those tools must
//          have skipped something (proof that the PATH really lacked it).
import { readFileSync } from "node:fs";

const [file, mode] = process.argv.slice(2);
const r = JSON.parse(readFileSync(file, "utf8"));
const tests = r.testResults.flatMap((s) => s.assertionResults.map((a) => ({ ...a, file: s.name })));
// A suite that failed outside any test (a hook, an import) counts as one failure: it must never read as green.
const suiteErrors = r.testResults.filter((s) => s.status === "failed" && !s.assertionResults.some((a) => a.status === "failed"));
for (const s of suiteErrors) console.log(`suite failed: ${s.name}: ${s.message}`);
// Each failed test by name, with the first line of its failure: the log's tail is all a CI summary shows.
for (const t of tests.filter((x) => x.status === "failed")) {
  const why = String(t.failureMessages?.[0] ?? "").split("\n")[0];
  console.log(`failed: ${t.file} > ${t.fullName}: ${why.slice(0, 300)}`);
}
const failed = r.numFailedTests + suiteErrors.length;
const skipped = tests.filter((t) => t.status === "skipped" || t.status === "pending" || t.status === "todo");
const byTool = {};
for (const t of skipped) {
  const tool = t.meta?.missingTool ?? "(no missing tool)";
  byTool[tool] = (byTool[tool] ?? 0) + 1;
}
const skips = Object.entries(byTool)
  .map(([tool, n]) => `${tool}: ${n}`)
  .join(", ");
console.log(`${r.numPassedTests} passed, ${failed} failed${skipped.length ? `, ${skipped.length} skipped (${skips})` : ""}`);
let bad = failed > 0;
if (mode === "all") {
  for (const t of skipped)
    console.log(`skipped on CI (${t.meta?.missingTool ? `missing ${t.meta.missingTool}` : "no reason"}): ${t.fullName}`);
  if (skipped.length > 0) bad = true;
} else if (mode === "fresh") {
  for (const t of skipped.filter((x) => !x.meta?.missingTool)) {
    console.log(`skipped without a missing tool: ${t.fullName}`);
    bad = true;
  }
  for (const tool of ["redis-server", "chromium", "slurm", "bubblewrap"])
    if (!byTool[tool]) {
      console.log(`nothing was skipped for ${tool}: the fresh machine should lack it`);
      bad = true;
    }
} else {
  console.log(`unknown mode ${mode}`);
  bad = true;
}
process.exit(bad ? 1 : 0);
