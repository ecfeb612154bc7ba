/**
 * @module
 * JSON text for values that may hold bigints (exact 64-bit KQL longs, src/kql/README.md "The value
 * of a long"): a bigint is written as a JSON number with every digit, as Kusto's REST API writes
 * longs. Everything else is exactly JSON.stringify's output. Values without bigints take
 * JSON.stringify's own path; only a payload that holds one pays for the replacer.
 */
import { randomBytes } from 'node:crypto'

// A marker no input string can forge: a random nonce per process, wrapped in NUL characters
// (which JSON.stringify escapes in ordinary strings, so only the marker survives as written).
const NONCE = randomBytes(8).toString('hex')
const MARK = `\u0000${NONCE}:`
const MARKED = new RegExp(`"\\\\u0000${NONCE}:(-?\\d+)\\\\u0000"`, 'g')

/** JSON.stringify, except that bigints become JSON numbers with their exact digits. */
export function stringifyExact(value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, undefined, space)
  } catch (error) {
    if (!(error instanceof TypeError) || !/BigInt/i.test(error.message)) throw error
  }
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${MARK}${v}\u0000` : v), space)
  return text.replace(MARKED, '$1')
}
