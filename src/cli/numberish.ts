/** A number flag's value: a number where it reads as one, else the text itself, for the schema to refuse by name. */
export const numberish = (v: string): number | string => (v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v);
