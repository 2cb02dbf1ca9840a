import type { ChatRequest } from "../types.ts";
import { textOf } from "./conversation.ts";
import { EVOLVE_START, extractBlock, perturbBlock } from "./discovery-executor.ts";
import { parseHints } from "./hints.ts";
import { registerOfflineRole } from "./policy.ts";
import { rng, seedFrom } from "./rng.ts";

/**
 * The offline model asked in plain chat, with no tools (a harness program such as
 * harnesses/examples/program-harness): given a program with an EVOLVE block it replies with the whole program in one
 * code block, the block's float literals perturbed once (the discovery executor's step, seeded by the request); given
 * a question to answer "as …" it replies `#### n`, n the question's last number (or as `hone-hint: qa_strategy=sum`
 * says: sum, product, difference, ratio). It does not read either; it gives a program harness something to measure.
 */
const ANSWER_AS = /Give your final answer as/;

/** The program in a message: a fenced block holding the EVOLVE markers, else the text after the first blank line. */
function programIn(text: string): string | undefined {
  const fence = /```[\w-]*\n([\s\S]*?)```/.exec(text)?.[1];
  if (fence?.includes(EVOLVE_START)) return fence;
  const rest = text.includes("\n\n") ? text.slice(text.indexOf("\n\n") + 2) : text;
  return rest.includes(EVOLVE_START) ? rest : undefined;
}

function combine(numbers: number[], strategy: string): number {
  if (numbers.length === 0) return 0;
  const [a = 0, b = 1] = numbers;
  if (strategy === "sum") return numbers.reduce((x, y) => x + y, 0);
  if (strategy === "product") return numbers.reduce((x, y) => x * y, 1);
  if (strategy === "difference") return numbers.slice(1).reduce((x, y) => x - y, a);
  if (strategy === "ratio") return numbers.length > 1 && b !== 0 ? a / b : a;
  return numbers[numbers.length - 1] as number;
}

const lastUser = (r: ChatRequest) => textOf(r.messages, ["user"]).pop() ?? "";

registerOfflineRole({
  name: "plain-chat",
  claims: (r: ChatRequest) =>
    (r.tools ?? []).length === 0 &&
    !textOf(r.messages, ["system"]).some((t) => t.includes("hone-role:")) &&
    (programIn(lastUser(r)) !== undefined || ANSWER_AS.test(lastUser(r))),
  reply: (r: ChatRequest) => {
    const text = lastUser(r);
    const hints = parseHints(textOf(r.messages, ["system", "user"]));
    const program = programIn(text);
    if (program !== undefined) {
      const block = extractBlock(program) ?? "";
      const random = rng(seedFrom(r.sampling?.seed ?? 0, r.trial ?? 0, program));
      const next = perturbBlock(block, random, r.sampling?.temperature ?? 1, hints);
      return { content: `\`\`\`python\n${program.replace(block, next)}\`\`\``, tool_calls: [] };
    }
    const all = textOf(r.messages, ["system", "user"]).join("\n");
    const strategy = /hone-hint: qa_strategy=([a-z]+)/.exec(all)?.[1] ?? "last";
    const question = text.slice(0, text.search(ANSWER_AS));
    const numbers = (question.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number).filter(Number.isFinite);
    const value = combine(numbers, strategy);
    return { content: `#### ${Number.isFinite(value) ? Number(value.toPrecision(12)) : 0}`, tool_calls: [] };
  },
});
