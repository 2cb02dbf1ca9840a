import { useState } from "react";
import { str } from "../format.ts";

/** The head of a long text: at most `lines` lines and `chars` characters. */
export function head(text: string, lines: number, chars: number): string {
  let end = -1;
  for (let n = 0; n < lines; n++) {
    end = text.indexOf("\n", end + 1);
    if (end === -1) return text.slice(0, chars);
  }
  return text.slice(0, Math.min(end, chars));
}

const count = (text: string) => text.split("\n").length;

/**
 * A long text (an edit, a tool's output, a prompt) shown by its first lines, with a control to show it all and to
 * fold it again. Short texts are shown as they are.
 */
export function Collapsible({
  text,
  lines = 6,
  chars = 800,
  className,
  summary,
}: {
  text: string;
  lines?: number;
  chars?: number;
  className?: string;
  /** Shown on one line instead of the first lines while folded. */
  summary?: string;
}) {
  const [open, setOpen] = useState(false);
  // A trajectory from someone else's run folder may hold anything where a text belongs.
  if (typeof text !== "string") text = str(text);
  const short = head(text, lines, chars);
  if (short.length === text.length) return <pre className={className}>{text}</pre>;
  const total = count(text);
  if (summary && !open)
    return (
      <div className="collapsible folded-line" data-testid="collapsible" data-open={false}>
        <span className="summary small">{summary}</span>{" "}
        <button type="button" className="link small" onClick={() => setOpen(true)} aria-expanded={false}>
          show all {total.toLocaleString("en-US")} lines
        </button>
      </div>
    );
  return (
    <div className={`collapsible${open ? " open" : ""}`} data-testid="collapsible" data-open={open}>
      <pre className={className}>{open ? text : `${short}…`}</pre>
      <button type="button" className="link small" onClick={() => setOpen(!open)} aria-expanded={open}>
        {open ? "fold" : `show all ${total.toLocaleString("en-US")} lines (${text.length.toLocaleString("en-US")} characters)`}
      </button>
    </div>
  );
}

/** A reasoning model's thinking, folded until asked for. */
export function Reasoning({ text }: { text: string }) {
  if (!text.trim()) return null;
  return (
    <details className="reasoning" data-testid="reasoning">
      <summary>
        reasoning · {count(text).toLocaleString("en-US")} lines, {text.length.toLocaleString("en-US")} characters
      </summary>
      <pre>{text}</pre>
    </details>
  );
}

/** One line saying what SEARCH/REPLACE blocks do ("2 SEARCH/REPLACE blocks: 22 lines → 24 lines"), or null. */
export function editSummary(text: string): string | null {
  const blocks = text.split("<<<<<<< SEARCH").slice(1);
  if (blocks.length === 0) return null;
  let from = 0;
  let to = 0;
  const lines = (s: string) => (s === "" ? 0 : s.split("\n").length);
  for (const b of blocks) {
    const [search = "", rest = ""] = b.split("\n=======\n");
    from += lines(search.replace(/^\n/, ""));
    to += lines((rest.split(">>>>>>> REPLACE")[0] ?? "").replace(/\n$/, ""));
  }
  const n = blocks.length;
  return `${n} SEARCH/REPLACE block${n === 1 ? "" : "s"}: ${from} line${from === 1 ? "" : "s"} → ${to} line${to === 1 ? "" : "s"}`;
}
