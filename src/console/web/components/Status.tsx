export function Status({ value }: { value: string }) {
  return <span className={`status s-${value.replace(/[^a-z_]/gi, "")}`}>{value}</span>;
}
