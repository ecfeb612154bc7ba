/**
 * @module
 * Human duration text (`15m`, `1h`, `8h`, `24h`, `7d`, `30d`, `90s`, `1h30m`) to milliseconds.
 */

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** Parses `1h30m`-style text; returns undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim().toLowerCase()
  if (!/^(\d+[smhdw])+$/.test(s)) return undefined
  let total = 0
  for (const [, amount, unit] of s.matchAll(/(\d+)([smhdw])/g)) total += Number(amount) * UNIT_MS[unit!]!
  return Number.isSafeInteger(total) ? total : undefined
}

/** Short text for a duration in ms: `15m`, `1h`, `7d`, `1d2h`. */
export function formatDuration(ms: number): string {
  const parts: string[] = []
  let rest = Math.round(ms / 1000)
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`)
      rest %= size
    }
  }
  return parts.join('') || '0s'
}
