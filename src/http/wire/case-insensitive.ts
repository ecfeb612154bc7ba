/**
 * @module
 * Request bodies and query strings accept property names case-insensitively (`query` = `Query`,
 * `scopeKey` = `ScopeKey`), as clients of .NET-style APIs expect (design §5). Keys are renamed to
 * the declared spelling before validation; two spellings of one property are refused.
 */
import { InvalidInputError } from '../../domain/errors.js'

export function normaliseKeys(value: unknown, declared: readonly string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const byLower = new Map(declared.map((k) => [k.toLowerCase(), k]))
  const out: Record<string, unknown> = {}
  // a Map, not an object: `in` on an object also sees inherited names ("constructor", "toString")
  const from = new Map<string, string>()
  for (const [key, v] of Object.entries(value)) {
    const target = byLower.get(key.toLowerCase()) ?? key
    const earlier = from.get(target)
    if (earlier !== undefined) throw new InvalidInputError(`"${earlier}" and "${key}" name the same property; send it once`)
    from.set(target, key)
    out[target] = v
  }
  return out
}
