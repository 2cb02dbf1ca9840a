import { type CST, Parser } from "yaml";

/** YAML that parses but is refused (nested too deep, aliases expanding too far): its message says why. */
export class YamlRefused extends Error {}

/** The reason a YAML file is refused, after the file's name: "is not valid YAML: …", or a YamlRefused's own. */
export const yamlProblem = (err: unknown) =>
  err instanceof YamlRefused ? err.message : `is not valid YAML: ${(err as Error).message.split("\n")[0]}`;

/**
 * The line of the first collection of `text` nested past `max` levels (mappings and lists inside each other), or
 * undefined. Walked on `yaml`'s concrete syntax tree (its parser keeps a stack, not the call stack) with a stack of
 * our own, before a document is composed: composing recurses once per level, so ten thousand `[` would end in
 * "Maximum call stack size exceeded", or, when the stack runs out inside V8's regular-expression compiler, abort
 * the process outright.
 */
export function yamlNestedPast(text: string, max: number): number | undefined {
  const stack: [CST.Token, number][] = [];
  for (const token of new Parser().parse(text)) stack.push([token, 0]);
  while (stack.length > 0) {
    const [token, depth] = stack.pop() as [CST.Token, number];
    if (token.type === "document" && token.value) stack.push([token.value, depth]);
    if (token.type !== "block-map" && token.type !== "block-seq" && token.type !== "flow-collection") continue;
    if (depth + 1 > max) return text.slice(0, token.offset).split("\n").length;
    for (const item of token.items as { key?: CST.Token | null; value?: CST.Token }[]) {
      if (item.key) stack.push([item.key, depth + 1]);
      if (item.value) stack.push([item.value, depth + 1]);
    }
  }
  return undefined;
}
