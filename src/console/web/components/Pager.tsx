import { num } from "../format.ts";

/** A page of a list's rows at a time: its two buttons, "page N of M" and, when `noun` is given, the row count. */
export function Pager(props: {
  testId: string;
  offset: number;
  total: number;
  perPage: number;
  setOffset: (next: number) => void;
  labels?: [string, string];
  noun?: string;
}) {
  const { testId, offset, total, perPage, setOffset, labels = ["previous", "next"], noun } = props;
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1 && offset === 0) return null;
  return (
    <div className="pager" data-testid={testId}>
      <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - perPage))}>
        {labels[0]}
      </button>
      <span className="muted">
        page {offset / perPage + 1} of {num(pages)}
        {noun ? ` · ${num(total)} ${noun}` : ""}
      </span>
      <button type="button" disabled={offset + perPage >= total} onClick={() => setOffset(offset + perPage)}>
        {labels[1]}
      </button>
    </div>
  );
}
