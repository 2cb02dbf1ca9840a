import { createHash } from "node:crypto";

/** A 32-bit seed from any values, stable across runs and machines. */
export function seedFrom(...parts: (string | number | undefined)[]): number {
  const h = createHash("sha256")
    .update(parts.map((p) => String(p ?? "")).join("\u0000"))
    .digest();
  return h.readUInt32LE(0);
}

export { rng } from "../../rng.ts";

export function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
