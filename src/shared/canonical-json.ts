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

import { isWellFormed } from './text-rules.js'
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
  return write(value, [], [])
}

/** The canonical form as UTF-8 bytes. */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8')
}

/**
 * `ancestors` holds the objects being written (cycle check); `path` the member names and indexes
 * leading here. The path only becomes text when an error is thrown, keeping the hot path free of
 * per-member string building.
 */
function fail(message: string, path: readonly (string | number)[]): never {
  const pointer = path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')
  throw new CanonicalJsonError(message, pointer)
}

function writeString(s: string, path: (string | number)[]): string {
  if (!isWellFormed(s)) fail('string contains a lone surrogate (JCS needs valid Unicode)', path)
  return JSON.stringify(s)
}

function write(value: unknown, ancestors: object[], path: (string | number)[]): string {
  switch (typeof value) {
    case 'string':
      return writeString(value, path)
    case 'number':
      if (!Number.isFinite(value)) fail(`${String(value)} is not a JSON number`, path)
      return String(value) // ECMAScript Number::toString, as RFC 8785 §3.2.2.3 requires; -0 → "0"
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object': {
      if (value === null) return 'null'
      if (ancestors.includes(value)) fail('cycle: the value contains itself', path)
      ancestors.push(value)
      let out: string
      if (Array.isArray(value)) {
        out = '['
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ','
          path.push(i)
          // A hole reads as undefined and is refused below, rather than silently becoming null.
          out += write(value[i], ancestors, path)
          path.pop()
        }
        out += ']'
      } else {
        const proto = Object.getPrototypeOf(value)
        if (proto !== Object.prototype && proto !== null) {
          const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object'
          fail(`${name} is not plain JSON data`, path)
        }
        if (Object.getOwnPropertySymbols(value).length > 0) fail('symbol-keyed properties are not JSON', path)
        const obj = value as Record<string, unknown>
        // Default sort compares UTF-16 code units, which is exactly RFC 8785 §3.2.3.
        const keys = Object.keys(obj).sort()
        out = '{'
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!
          if (i > 0) out += ','
          path.push(key)
          out += writeString(key, path)
          out += ':'
          out += write(obj[key], ancestors, path)
          path.pop()
        }
        out += '}'
      }
      ancestors.pop()
      return out
    }
    case 'undefined':
      return fail('undefined is not a JSON value', path)
    default:
      return fail(`a ${typeof value} is not a JSON value`, path)
  }
}

// --- validation of stored canonical text ----------------------------------------------------------

/**
 * True when `text` is exactly the RFC 8785 canonical form of some JSON value, i.e. when
 * canonicalJson(JSON.parse(text)) === text, decided in one pass without building the value: no
 * whitespace; members in strictly increasing UTF-16 order (which also rules out duplicates);
 * numbers as Number#toString writes them; strings with exactly JCS's escapes and no lone
 * surrogates. The verifier runs this on every stored body, so it avoids allocation on the hot path.
 */
export function isCanonicalJson(text: string): boolean {
  vsrc = text
  vpos = 0
  try {
    return validValue(0) && vpos === text.length
  } catch {
    return false // e.g. nesting deep enough to exhaust the stack: not something we ever wrote
  } finally {
    vsrc = ''
  }
}

let vsrc = ''
let vpos = 0

const MAX_VALIDATE_DEPTH = 1000

function validValue(depth: number): boolean {
  const c = vsrc.charCodeAt(vpos)
  switch (c) {
    case 0x7b: // {
      return validObject(depth + 1)
    case 0x5b: // [
      return validArray(depth + 1)
    case 0x22: // "
      return validString() !== null
    case 0x74:
      return validWord('true')
    case 0x66:
      return validWord('false')
    case 0x6e:
      return validWord('null')
    default:
      return c === 0x2d || (c >= 0x30 && c <= 0x39) ? validNumber() : false
  }
}

function validWord(w: string): boolean {
  if (!vsrc.startsWith(w, vpos)) return false
  vpos += w.length
  return true
}

function validObject(depth: number): boolean {
  if (depth > MAX_VALIDATE_DEPTH) return false
  vpos++
  if (vsrc.charCodeAt(vpos) === 0x7d) {
    vpos++
    return true
  }
  let previous: string | null = null
  for (;;) {
    if (vsrc.charCodeAt(vpos) !== 0x22) return false
    const key = validString()
    if (key === null) return false
    // Default string comparison is by UTF-16 code units, as RFC 8785 §3.2.3 sorts.
    if (previous !== null && !(previous < key)) return false
    previous = key
    if (vsrc.charCodeAt(vpos) !== 0x3a) return false
    vpos++
    if (!validValue(depth)) return false
    const c = vsrc.charCodeAt(vpos++)
    if (c === 0x7d) return true
    if (c !== 0x2c) return false
  }
}

function validArray(depth: number): boolean {
  if (depth > MAX_VALIDATE_DEPTH) return false
  vpos++
  if (vsrc.charCodeAt(vpos) === 0x5d) {
    vpos++
    return true
  }
  for (;;) {
    if (!validValue(depth)) return false
    const c = vsrc.charCodeAt(vpos++)
    if (c === 0x5d) return true
    if (c !== 0x2c) return false
  }
}

/** Validates a string literal in canonical form and returns its decoded value, or null. */
function validString(): string | null {
  const s = vsrc
  const start = vpos + 1
  let i = start
  let decoded: string | null = null // only built when an escape occurs
  let chunk = start
  for (;;) {
    const c = s.charCodeAt(i)
    if (c === 0x22) {
      vpos = i + 1
      return decoded === null ? s.slice(start, i) : decoded + s.slice(chunk, i)
    }
    if (Number.isNaN(c) || c < 0x20) return null
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c > 0xdbff) return null
      const d = s.charCodeAt(i + 1)
      if (!(d >= 0xdc00 && d <= 0xdfff)) return null
      i += 2
      continue
    }
    if (c !== 0x5c) {
      i++
      continue
    }
    // An escape: JCS writes only \" \\ \b \f \n \r \t, and \u00xx (lowercase) for other controls.
    decoded = (decoded ?? '') + s.slice(chunk, i)
    const e = s.charCodeAt(i + 1)
    let ch: string
    if (e === 0x22) ch = '"'
    else if (e === 0x5c) ch = '\\'
    else if (e === 0x62) ch = '\b'
    else if (e === 0x66) ch = '\f'
    else if (e === 0x6e) ch = '\n'
    else if (e === 0x72) ch = '\r'
    else if (e === 0x74) ch = '\t'
    else if (e === 0x75) {
      const hex = s.slice(i + 2, i + 6)
      if (!/^00[01][0-9a-f]$/.test(hex)) return null
      const code = parseInt(hex, 16)
      if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return null
      ch = String.fromCharCode(code)
      i += 4
    } else return null
    decoded += ch
    i += 2
    chunk = i
  }
}

function validNumber(): boolean {
  const s = vsrc
  const start = vpos
  let i = vpos
  if (s.charCodeAt(i) === 0x2d) i++
  const intStart = i
  let plainInteger = true
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c >= 0x30 && c <= 0x39) i++
    else if (c === 0x2e || c === 0x65 || c === 0x2b || c === 0x2d) {
      plainInteger = false
      i++
    } else break
  }
  vpos = i
  const digits = i - intStart
  if (digits === 0) return false
  // Fast path: an integer of up to 15 digits is canonical unless it has a leading zero or is -0.
  if (plainInteger && digits <= 15) {
    if (s.charCodeAt(intStart) === 0x30) return digits === 1 && intStart === start
    return true
  }
  const text = s.slice(start, i)
  const n = Number(text)
  return Number.isFinite(n) && String(n) === text
}
