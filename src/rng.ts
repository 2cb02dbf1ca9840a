/**
 * mulberry32: a small, fast, deterministic generator (uniform in [0, 1)). Used wherever hone needs the same draws for
 * the same seed: the offline model's choices, bootstrap resamples, benchmark splits. Every layer may import it.
 */
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
