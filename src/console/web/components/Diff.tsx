/** A unified diff with added, removed and hunk lines coloured; file headers in bold. */
export function Diff({ text, testId = "diff" }: { text: string; testId?: string }) {
  if (!text.trim()) return <p className="muted">No differences.</p>;
  const lines = text.split("\n");
  return (
    <pre className="diff" data-testid={testId}>
      {lines.map((line, i) => {
        const kind =
          line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ")
            ? "file"
            : line.startsWith("@@")
              ? "hunk"
              : line.startsWith("+")
                ? "add"
                : line.startsWith("-")
                  ? "del"
                  : "ctx";
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: diff lines have no identity beyond their position
          <div key={i} className={`dl ${kind}`}>
            {line || " "}
          </div>
        );
      })}
    </pre>
  );
}
