import { homedir } from "node:os";
import { join } from "node:path";
import type { OfficialScorer } from "../benchmark.ts";
import { type CodeCheck, checkCode } from "./check-code.ts";

/**
 * The program a chat model's answer stands for: the answer as written, or the inside of its one markdown code block
 * when the whole answer is a single fenced block (the first step of every chat-model code harness; the official
 * harnesses take raw completions).
 */
export function completionText(answer: string): string {
  const fenced = /^\s*```[A-Za-z0-9_+-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```\s*$/.exec(answer);
  return fenced ? (fenced[1] as string) : answer;
}

/** Folders a completion must not read where bubblewrap is missing (datasets with the tests and gold code in them). */
export function hiddenFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const cache = env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  return [join(cache, "hone"), ...(env.HONE_DATA_DIR ? [env.HONE_DATA_DIR] : [])];
}

/**
 * A code benchmark's scorer: pass@1 of one completion, 1 when the program passes every test (the official harness's
 * "passed"), else 0. `check` builds the check from the answer and the task's gold; the run is sandboxed.
 */
export function executionScorer(check: (completion: string, gold: unknown) => CodeCheck): OfficialScorer {
  return {
    metrics: ["pass@1"],
    score: "pass@1",
    apply: async (response, gold) => {
      const c = check(completionText(response), gold);
      const verdict = await checkCode({ ...c, hide: [...hiddenFolders(), ...(c.hide ?? [])] });
      return { "pass@1": verdict.passed ? 1 : 0 };
    },
    extract: (response) => completionText(response).trim().split("\n")[0]?.slice(0, 80),
  };
}
