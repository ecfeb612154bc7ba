/**
 * @module
 * Token lifetimes (spec 5.3, 8): one of the listed choices or a custom duration from 15 minutes to
 * 30 days inclusive.
 */
import { formatDuration, parseDuration } from '../../shared/durations.js'
import { InvalidInputError } from '../errors.js'

export const MIN_TOKEN_LIFETIME_MS = 15 * 60_000
export const MAX_TOKEN_LIFETIME_MS = 30 * 86_400_000

/** The choices the portal offers, in order (spec 5.3). */
export const EXPIRY_CHOICES = [
  { label: '15 minutes', value: '15m' },
  { label: '1 hour', value: '1h' },
  { label: '8 hours', value: '8h' },
  { label: '24 hours', value: '24h' },
  { label: '7 days', value: '7d' },
  { label: '30 days', value: '30d' },
] as const

/**
 * Resolves an expiry text (`15m`, `8h`, `7d`, `90m`, `2d12h`, or a number of seconds) to a lifetime
 * in ms, refusing anything outside 15 minutes..30 days with a message that says the bounds.
 */
export function tokenLifetime(text: string): number {
  const trimmed = text.trim()
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : parseDuration(trimmed)
  if (ms === undefined) {
    throw new InvalidInputError(`"${text}" is not a duration: use 15m, 1h, 8h, 24h, 7d, 30d or a custom duration like 90m or 2d12h`)
  }
  if (ms < MIN_TOKEN_LIFETIME_MS || ms > MAX_TOKEN_LIFETIME_MS) {
    throw new InvalidInputError(`a token lifetime must be between 15 minutes and 30 days; ${formatDuration(ms)} is outside that range`)
  }
  return ms
}
