import { join } from "node:path";
import { tempDir, write } from "./fixtures.ts";

/**
 * A small GSM8K-format data folder (train.jsonl and test.jsonl, `#### n` gold) whose answers are the sum of the
 * question's numbers: the offline QA solver's `sum` strategy solves every one, its default `last` strategy none.
 */
export function sumQuestions(n = 8): string {
  const dir = tempDir("hone-data-");
  const lines = (offset: number) =>
    Array.from({ length: n }, (_, i) => {
      const a = 3 + ((i + offset) % 7);
      const b = 11 + ((i * 5 + offset) % 13);
      return JSON.stringify({
        question: `Sam has ${a} marbles and finds ${b} more. How many marbles does Sam have now?`,
        answer: `Sam has ${a} + ${b} = <<${a}+${b}=${a + b}>>${a + b} marbles.\n#### ${a + b}`,
      });
    }).join("\n");
  write(join(dir, "gsm8k", "train.jsonl"), `${lines(1)}\n`);
  write(join(dir, "gsm8k", "test.jsonl"), `${lines(0)}\n`);
  return dir;
}
