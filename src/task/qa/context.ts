import { normalizeAnswer } from "./hotpot.ts";

/** The question with its reading passages, as the distractor / reading-comprehension settings give them. */
export function withPassages(question: string, passages: { title: string; text: string }[]): string {
  if (passages.length === 0) return question;
  const body = passages.map((p) => `## ${p.title}\n${p.text}`).join("\n\n");
  return `${body}\n\n# Question\n${question}`;
}

const WRONG = ["Zebulon Quartz", "Marigold Fenwick", "Lake Ostrava", "1843"];

/** A plausible wrong short answer: a name or year that shares no word with any accepted answer. */
export function wrongShortAnswer(golds: string[]): string {
  const words = new Set(golds.flatMap((g) => normalizeAnswer(g).split(" ")));
  return (
    WRONG.find(
      (w) =>
        !normalizeAnswer(w)
          .split(" ")
          .some((t) => words.has(t)),
    ) ?? "Zebulon Quartz Marigold"
  );
}
