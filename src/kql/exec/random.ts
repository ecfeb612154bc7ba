/**
 * @module
 * The seeded random source of a run (rand(), sample): deterministic for a given seed, so a query
 * with `seed` set returns the same rows every time.
 */

/** mulberry32: a small, fast 32-bit PRNG; returns numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const DEFAULT_SEED = 0x5eed
