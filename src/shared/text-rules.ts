/**
 * @module
 * Rules every stored text follows, in one place for the parsers, the canonical JSON writer and the
 * signed notes: well-formed UTF-16 (no lone surrogate), and no U+0000 (PostgreSQL cannot store it).
 */

// String.prototype.isWellFormed is ES2024 (in V8 since Node 20); TypeScript's es2023 lib lacks it.
export const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed()

/** Where a NUL character is in a JSON value, or undefined: the path to it, and whether a member name holds it. */
export interface NulPlace {
  readonly path: string
  readonly inName: boolean
}

/** The first NUL character in `value` (strings and member names, at any depth), found depth first. */
export function findNulCharacter(value: unknown, path = 'body'): NulPlace | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? { path, inName: false } : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const place = findNulCharacter(value[i], `${path}[${i}]`)
      if (place) return place
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return { path, inName: true }
      const place = findNulCharacter(item, `${path}.${key}`)
      if (place) return place
    }
  }
  return undefined
}
