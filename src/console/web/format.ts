export const score = (v: number | null | undefined, digits = 5) => (v === null || v === undefined ? "–" : v.toFixed(digits));

export const num = (v: number | null | undefined) => (v === null || v === undefined ? "–" : v.toLocaleString("en-US"));

export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

export const when = (iso: string | null) => (iso ? iso.replace("T", " ").replace(/\.\d+Z$/, " UTC") : "–");

export const signed = (v: number | null | undefined) =>
  v === null || v === undefined ? "–" : `${v >= 0 ? "+" : ""}${v.toFixed(3)}`;
