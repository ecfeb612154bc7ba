/**
 * @module
 * Restart delays of a failing connector: exponential from 1 s, capped at 60 s, with "full jitter"
 * in the upper half (delay in [d/2, d]) so processes restarting together do not retry in lockstep.
 */

export interface BackoffPolicy {
  readonly initialMs: number
  readonly maxMs: number
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000 }

/** Delay before attempt `failures + 1`, after `failures` (>= 1) consecutive failures. */
export function backoffDelay(failures: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30)
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent)
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}
