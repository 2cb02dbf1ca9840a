import { createHash } from "node:crypto";

/** A 32-bit seed from any values, stable across runs and machines. */
export function seedFrom(...parts: (string | number | undefined)[]): number {
  const h = createHash("sha256")
    .update(parts.map((p) => String(p ?? "")).join("\u0000"))
    .digest();
  return h.readUInt32LE(0);
}

/** mulberry32: small, fast, deterministic; good enough for a simulator's choices. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
