// The records behind every page come from a run folder that may be someone else's: a value that is not what it
// should be (a string where a score belongs, an infinity sent as null) is shown as "–", never a page that fails.
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

export const score = (v: unknown, digits = 5) => (finite(v) ? v.toFixed(digits) : "–");

export const num = (v: unknown) => (finite(v) ? v.toLocaleString("en-US") : "–");

export function duration(seconds: unknown): string {
  if (!finite(seconds)) return "–";
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

export const when = (iso: unknown) => (typeof iso === "string" && iso ? iso.replace("T", " ").replace(/\.\d+Z$/, " UTC") : "–");

export const signed = (v: unknown) => (finite(v) ? `${v >= 0 ? "+" : ""}${v.toFixed(3)}` : "–");

/** A text field as text: a string as it is, anything else as its JSON (never an object React cannot draw). */
export const str = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : JSON.stringify(v));
