import { str } from "../format.ts";

export function Status({ value }: { value: unknown }) {
  const text = str(value);
  return <span className={`status s-${text.replace(/[^a-z_]/gi, "")}`}>{text}</span>;
}
