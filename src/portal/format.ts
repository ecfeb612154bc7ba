/**
 * @module
 * How the portal shows times: UTC text a person reads at a glance, with the exact ISO time in the
 * `datetime` attribute and a relative hint ("in 7 days", "3 minutes ago").
 */
import { type Html, html } from './html.js'

export function utcText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** "in 2 hours", "5 minutes ago", "just now". */
export function relativeText(ms: number, now: number): string {
  const diff = ms - now
  const abs = Math.abs(diff)
  if (abs < 45_000) return 'just now'
  const units: [string, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ]
  for (const [unit, size] of units) {
    // 59 min 59 s reads as "1 hour" (token expiries are whole seconds after a creation time in ms).
    if (abs >= size * 0.98 || unit === 'minute') {
      const n = Math.max(1, Math.round(abs / size))
      const text = `${n} ${unit}${n === 1 ? '' : 's'}`
      return diff > 0 ? `in ${text}` : `${text} ago`
    }
  }
  return 'just now'
}

export function timeTag(ms: number | undefined, now: number, empty = 'never'): Html {
  if (ms === undefined) return html`<span class="muted">${empty}</span>`
  return html`<time datetime="${new Date(ms).toISOString()}">${utcText(ms)}</time> <span class="muted">(${relativeText(ms, now)})</span>`
}
