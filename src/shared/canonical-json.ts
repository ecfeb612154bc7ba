/**
 * @module
 * RFC 8785 JSON Canonicalization Scheme (JCS) for plain JSON values: the one way the activity log
 * turns a record body into the text it stores and hashes (design §8).
 *
 * - Object members sorted by their names' UTF-16 code units (JS's default string order), recursively.
 * - Numbers as ECMAScript Number.prototype.toString (`4.50` → `4.5`, `1e30` → `1e+30`, `-0` → `0`).
 * - Strings with minimal escaping: `\"`, `\\`, `\b \f \n \r \t`, other controls as lowercase
 *   `\u00xx`, everything else literal (JSON.stringify does exactly this for well-formed strings).
 * - No whitespace.
 *
 * Refused (CanonicalJsonError): NaN and ±Infinity, lone surrogates (JCS requires I-JSON strings),
 * and anything that is not plain JSON data: undefined, functions, symbols, bigints, Dates, Maps,
 * class instances, array holes, cycles. A `toJSON` method is never called: only data is hashed.
 * Unicode is not normalised (JCS does not; NFC and NFD texts stay different).
 */

export class CanonicalJsonError extends Error {
  /** Where in the value the problem is, as a JSON-pointer-like path (`/details/items/3`). */
  readonly path: string

  constructor(message: string, path: string) {
    super(path === '' ? message : `${message} at ${path}`)
    this.name = 'CanonicalJsonError'
    this.path = path
  }
}

/** The canonical text of `value` (a JS string; its UTF-8 encoding is the canonical byte form). */
export function canonicalJson(value: unknown): string {
  return write(value, [], '')
}

/** The canonical form as UTF-8 bytes. */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8')
}

// String.prototype.isWellFormed is ES2024 (in V8 since Node 20); TypeScript's es2023 lib lacks it.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed()

function writeString(s: string, path: string): string {
  if (!isWellFormed(s)) {
    throw new CanonicalJsonError('string contains a lone surrogate (JCS needs valid Unicode)', path)
  }
  return JSON.stringify(s)
}

function write(value: unknown, ancestors: object[], path: string): string {
  switch (typeof value) {
    case 'string':
      return writeString(value, path)
    case 'number':
      if (!Number.isFinite(value)) {
        throw new CanonicalJsonError(`${String(value)} is not a JSON number`, path)
      }
      return String(value) // ECMAScript Number::toString, as RFC 8785 §3.2.2.3 requires; -0 → "0"
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object': {
      if (value === null) return 'null'
      if (ancestors.includes(value)) throw new CanonicalJsonError('cycle: the value contains itself', path)
      ancestors.push(value)
      let out: string
      if (Array.isArray(value)) {
        out = '['
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ','
          // A hole reads as undefined and is refused below, rather than silently becoming null.
          out += write(value[i], ancestors, `${path}/${i}`)
        }
        out += ']'
      } else {
        const proto = Object.getPrototypeOf(value)
        if (proto !== Object.prototype && proto !== null) {
          const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object'
          throw new CanonicalJsonError(`${name} is not plain JSON data`, path)
        }
        if (Object.getOwnPropertySymbols(value).length > 0) {
          throw new CanonicalJsonError('symbol-keyed properties are not JSON', path)
        }
        const obj = value as Record<string, unknown>
        // Default sort compares UTF-16 code units, which is exactly RFC 8785 §3.2.3.
        const keys = Object.keys(obj).sort()
        out = '{'
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!
          const childPath = `${path}/${escapePointer(key)}`
          if (i > 0) out += ','
          out += writeString(key, childPath)
          out += ':'
          out += write(obj[key], ancestors, childPath)
        }
        out += '}'
      }
      ancestors.pop()
      return out
    }
    case 'undefined':
      throw new CanonicalJsonError('undefined is not a JSON value', path)
    default:
      throw new CanonicalJsonError(`a ${typeof value} is not a JSON value`, path)
  }
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}
