/**
 * @module
 * The clock port. Everything that stamps or compares times takes a Clock so tests can move time
 * (URL expiry, token expiry) without sleeping.
 */

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock tests can set and advance. */
export function manualClock(
  start: number = Date.parse('2026-01-01T00:00:00Z'),
): Clock & { set(ms: number): void; advance(ms: number): void } {
  let current = start
  return {
    now: () => current,
    set: (ms) => {
      current = ms
    },
    advance: (ms) => {
      current += ms
    },
  }
}
