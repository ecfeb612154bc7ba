/**
 * @module
 * JSON text ↔ `dynamic` values with exact 64-bit integers (README "The value of a long"): an
 * integer in the text beyond ±(2^53 − 1) that fits int64 becomes a canonical long (a bigint), as
 * Kusto's parse_json() reads it as a long; a larger integer, or any number with a fraction or an
 * exponent, is a double. Writing prints a bigint with every digit. Text without a run of 16
 * digits (every value beyond 2^53 has one) takes JSON.parse's own path, so ordinary documents pay
 * nothing; the rest goes through lossless-json.
 */
import { parse as parseLossless } from 'lossless-json'
import { longFromText } from './long.js'
import type { DynamicValue } from './types.js'

const LONG_DIGITS = /\d{16}/
const INTEGER = /^-?\d+$/

function exactNumber(text: string): number | bigint {
  if (INTEGER.test(text)) {
    const long = longFromText(text)
    if (long !== null) return long
  }
  return Number(text)
}

/**
 * JSON.parse with exact longs; `reviver` as JSON.parse's. A repeated key keeps its last value, as
 * JSON.parse does. Throws a SyntaxError for text that is not JSON.
 */
export function parseDynamicJson(text: string, reviver?: (key: string, value: unknown) => unknown): DynamicValue {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text, reviver) as DynamicValue
  return parseLossless(text, reviver ?? null, {
    parseNumber: exactNumber,
    onDuplicateKey: ({ newValue }) => newValue,
  }) as DynamicValue
}

/**
 * JSON text of a dynamic value: JSON.stringify's output, except that bigints are JSON numbers
 * with their exact digits and a non-finite number is the JSON string `nonFinite(n)` gives.
 */
export function dynamicJsonText(value: DynamicValue, nonFinite: (n: number) => string): string {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? nonFinite(v) : v)) ?? 'null'
  } catch (error) {
    if (!(error instanceof TypeError) || !/BigInt/i.test(error.message)) throw error
  }
  return writeExact(value, nonFinite)
}

/** The slow path, only for values that hold a bigint: the same text JSON.stringify would write. */
function writeExact(v: unknown, nonFinite: (n: number) => string): string {
  if (v === null || v === undefined) return 'null'
  switch (typeof v) {
    case 'bigint':
      return v.toString()
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : JSON.stringify(nonFinite(v))
    case 'string':
    case 'boolean':
      return JSON.stringify(v)
    case 'object': {
      if (Array.isArray(v)) return `[${v.map((x) => writeExact(x, nonFinite)).join(',')}]`
      const parts: string[] = []
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || typeof x === 'function') continue
        parts.push(`${JSON.stringify(k)}:${writeExact(x, nonFinite)}`)
      }
      return `{${parts.join(',')}}`
    }
    default:
      return 'null'
  }
}
