import type { Middleware } from "../middleware.ts";

export function truncateMiddle(text: string, p: { max_chars: number; head_chars: number; tail_chars: number }): string {
  if (text.length <= p.max_chars) return text;
  const cut = text.length - p.head_chars - p.tail_chars;
  return `${text.slice(0, p.head_chars)}\n[... ${cut} characters cut by long_tool_output ...]\n${text.slice(-p.tail_chars)}`;
}

/** Keeps the head and tail of tool outputs longer than max_chars. */
export function longToolOutput(params: { max_chars: number; head_chars: number; tail_chars: number }): Middleware {
  return {
    name: "long_tool_output",
    afterTool(_view, _call, output) {
      if (output.length <= params.max_chars) return;
      return {
        output: truncateMiddle(output, params),
        note: `cut ${output.length - params.head_chars - params.tail_chars} characters`,
      };
    },
  };
}
