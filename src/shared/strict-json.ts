/**
 * @module
 * THE request-body parser for every /oi-api route: strict, lossless JSON (RFC 8259 grammar, I-JSON
 * rules of RFC 7493). What JSON.parse silently repairs is an error here, because the activity log
 * hashes what it stores (design §8) and a body that means something different from what the client
 * wrote must never reach a digest:
 *
 * - a duplicate member name at any depth (JSON.parse keeps the last one);
 * - a number whose value a JS number cannot carry exactly: the value written must equal the value of
 *   the shortest round-trip text of the parsed double (so `9007199254740993`, `0.10000000000000001`,
 *   `1e400` and `1e-400` fail, while `9007199254740992`, `1e20` and `0.1` pass);
 * - a lone surrogate, escaped (`"\ud800"`) or raw, and invalid UTF-8 in byte input;
 * - anything after the value except whitespace, a byte-order mark, and nesting deeper than a limit;
 * - the member name `__proto__` (an own property of that name turns into a prototype change as soon
 *   as downstream code copies the object with Object.assign).
 *
 * Errors carry a 0-based position counted in UTF-16 code units of the text (characters, for ASCII)
 * and a message a person can act on, e.g. `duplicate key "ScopeKey" at position 41`.
 * The hot paths use charCodeAt scanning, native slices and no per-token objects.
 */

import { isWellFormed } from './text-rules.js'
/** A JSON value as this parser returns it: plain objects (Object.prototype), arrays and primitives. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject
export interface JsonObject {
  [key: string]: JsonValue
}

export interface StrictJsonOptions {
  /** Deepest allowed nesting of arrays and objects; the top-level container is depth 1. Default 64. */
  readonly maxDepth?: number
  /**
   * An integer beyond ±(2^53 − 1) that fits a signed 64-bit integer becomes a bigint instead of an
   * `inexact-number` error (exact KQL longs on ingest). Off by default: other bodies are hashed as
   * plain JSON.
   */
  readonly exactIntegers?: boolean
}

/** What parseStrictJson returns with `exactIntegers`: JsonValue where integers may be bigints. */
export type ExactJsonValue = null | boolean | number | bigint | string | ExactJsonValue[] | { [key: string]: ExactJsonValue }

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** What went wrong, for callers that branch on it; the message is what a person reads. */
export type StrictJsonErrorCode =
  | 'syntax'
  | 'duplicate-key'
  | 'forbidden-key'
  | 'inexact-number'
  | 'invalid-unicode'
  | 'too-deep'
  | 'trailing-data'

/** A body that is not strict JSON. The HTTP edge maps it to 400 with `message` as the error text. */
export class StrictJsonError extends Error {
  readonly code: StrictJsonErrorCode
  /** 0-based offset in UTF-16 code units into the decoded text. */
  readonly position: number

  constructor(code: StrictJsonErrorCode, message: string, position: number) {
    super(message)
    this.name = 'StrictJsonError'
    this.code = code
    this.position = position
  }
}

export const DEFAULT_MAX_DEPTH = 64

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * Parses `input` (a string, or UTF-8 bytes as a Buffer/Uint8Array) and returns the value.
 * Throws StrictJsonError for anything that is not strict JSON; never returns a partial value.
 */
export function parseStrictJson(input: string | Uint8Array, options: StrictJsonOptions & { exactIntegers: true }): ExactJsonValue
export function parseStrictJson(input: string | Uint8Array, options?: StrictJsonOptions): JsonValue
export function parseStrictJson(input: string | Uint8Array, options?: StrictJsonOptions): JsonValue | ExactJsonValue {
  const text = typeof input === 'string' ? input : decodeUtf8(input)
  src = text
  pos = 0
  depth = 0
  maxDepth = options?.maxDepth ?? DEFAULT_MAX_DEPTH
  exactIntegers = options?.exactIntegers === true
  try {
    if (text.charCodeAt(0) === 0xfeff) {
      fail('syntax', 'a byte-order mark (U+FEFF) at position 0 is not allowed; send plain UTF-8', 0)
    }
    skipWhitespace()
    const value = parseValue()
    skipWhitespace()
    if (pos < src.length) {
      fail('trailing-data', `unexpected ${describeChar(pos)} at position ${pos} after the end of the JSON value`, pos)
    }
    return value
  } finally {
    src = ''
  }
}

/**
 * Parses the one value that starts at `start` of `text` (no whitespace before it) and returns it
 * with the position just after it; what follows is the caller's. For readers that handle the common
 * shape of a body themselves and hand nested values to this parser (strict-json-rows.ts).
 */
export function parseStrictJsonValueAt(
  text: string,
  start: number,
  options: StrictJsonOptions & { exactIntegers: true },
): { value: ExactJsonValue; end: number } {
  src = text
  pos = start
  depth = 0
  maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH
  exactIntegers = true
  try {
    const value = parseValue()
    return { value, end: pos }
  } finally {
    src = ''
  }
}

// Parser state lives at module level: the parser is synchronous and never re-entered, and plain
// variables are cheaper than a closure or a class instance per call.
let src = ''
let pos = 0
let depth = 0
let maxDepth = DEFAULT_MAX_DEPTH
let exactIntegers = false

function fail(code: StrictJsonErrorCode, message: string, at: number): never {
  throw new StrictJsonError(code, message, at)
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch {
    const at = firstInvalidUtf8(bytes)
    throw new StrictJsonError('invalid-unicode', `invalid UTF-8 at byte ${at}; the body must be UTF-8 text`, at)
  }
}

/** Byte offset of the first ill-formed UTF-8 sequence (error path only; RFC 3629 table 3-7). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0
  while (i < b.length) {
    const c = b[i]!
    if (c < 0x80) {
      i++
      continue
    }
    let need: number
    let lo = 0x80
    let hi = 0xbf
    if (c >= 0xc2 && c <= 0xdf) need = 1
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2
      if (c === 0xe0) lo = 0xa0
      if (c === 0xed) hi = 0x9f // would encode a surrogate
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3
      if (c === 0xf0) lo = 0x90
      if (c === 0xf4) hi = 0x8f
    } else return i
    for (let k = 1; k <= need; k++) {
      const d = b[i + k]
      if (d === undefined) return i
      if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) return i
    }
    i += need + 1
  }
  return b.length
}

function skipWhitespace(): void {
  let c = src.charCodeAt(pos)
  // Only the four JSON whitespace characters; JS's \s (NBSP, U+2028, ...) is not JSON whitespace.
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = src.charCodeAt(++pos)
}

function parseValue(): ExactJsonValue {
  const c = src.charCodeAt(pos)
  switch (c) {
    case 0x7b: // {
      return parseObject()
    case 0x5b: // [
      return parseArray()
    case 0x22: // "
      return parseString()
    case 0x74: // t
      return parseLiteral('true', true)
    case 0x66: // f
      return parseLiteral('false', false)
    case 0x6e: // n
      return parseLiteral('null', null)
    default:
      if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return parseNumber()
      return fail('syntax', `unexpected ${describeChar(pos)} at position ${pos}; expected a JSON value`, pos)
  }
}

function parseLiteral<T extends boolean | null>(word: string, value: T): T {
  if (src.startsWith(word, pos)) {
    pos += word.length
    return value
  }
  let end = pos
  while (end < src.length && end - pos < 12 && /[A-Za-z0-9]/.test(src[end]!)) end++
  return fail('syntax', `unexpected "${src.slice(pos, end)}" at position ${pos}; expected a JSON value (did you mean ${word}?)`, pos)
}

function enter(at: number): void {
  if (++depth > maxDepth) {
    fail('too-deep', `nesting deeper than ${maxDepth} levels at position ${at}`, at)
  }
}

function parseObject(): { [key: string]: ExactJsonValue } {
  enter(pos)
  pos++ // {
  const obj: { [key: string]: ExactJsonValue } = {}
  skipWhitespace()
  if (closes(0x7d)) return obj
  for (;;) {
    if (src.charCodeAt(pos) !== 0x22) {
      expected('a member name in double quotes')
    }
    const keyAt = pos
    const key = parseString()
    if (Object.hasOwn(obj, key)) {
      fail('duplicate-key', `duplicate key ${JSON.stringify(key)} at position ${keyAt}`, keyAt)
    }
    if (key === '__proto__') {
      fail('forbidden-key', `key "__proto__" at position ${keyAt} is not allowed`, keyAt)
    }
    skipWhitespace()
    if (src.charCodeAt(pos) !== 0x3a) expected('":" after the member name')
    pos++
    skipWhitespace()
    obj[key] = parseValue()
    if (endsList(0x7d, '"," or "}"')) return obj
  }
}

function parseArray(): ExactJsonValue[] {
  enter(pos)
  pos++ // [
  const arr: ExactJsonValue[] = []
  skipWhitespace()
  if (closes(0x5d)) return arr
  for (;;) {
    arr.push(parseValue())
    if (endsList(0x5d, '"," or "]"')) return arr
  }
}

/** Consumes the closing bracket `close` (leaving its level) if it stands here. */
function closes(close: number): boolean {
  if (src.charCodeAt(pos) !== close) return false
  pos++
  depth--
  return true
}

/** After a member or element: true at the closing bracket (consumed), false after a "," (consumed). */
function endsList(close: number, expectation: string): boolean {
  skipWhitespace()
  if (closes(close)) return true
  if (src.charCodeAt(pos) !== 0x2c) expected(expectation)
  pos++
  skipWhitespace()
  return false
}

function expected(what: string): never {
  return fail('syntax', `unexpected ${describeChar(pos)} at position ${pos}; expected ${what}`, pos)
}

function describeChar(at: number): string {
  if (at >= src.length) return 'end of input'
  const c = src.codePointAt(at)!
  if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f)) return `control character U+${hex4(c)}`
  if (c === 0x20 || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0xfeff) return `character U+${hex4(c)}`
  return `character ${JSON.stringify(String.fromCodePoint(c))}`
}

function hex4(c: number): string {
  return c.toString(16).toUpperCase().padStart(4, '0')
}

// Strings ------------------------------------------------------------------------------------------

const NEEDS_SLOW_PATH = /[\\\u0000-\u001f\ud800-\udfff]/

function parseString(): string {
  const start = pos + 1
  const end = src.indexOf('"', start)
  if (end !== -1) {
    // Fast path: no escapes, no control characters, no surrogates (the common case for keys and
    // values); the regex and the slice run natively.
    const s = src.slice(start, end)
    if (!NEEDS_SLOW_PATH.test(s)) {
      pos = end + 1
      return s
    }
    // Escapes: find the real closing quote (one not preceded by an odd run of backslashes) and let
    // the native JSON.parse decode the literal. It rejects raw control characters and bad escapes
    // but accepts lone surrogates, so those are checked on the literal and on the result. Any
    // failure falls through to the precise (slower) scanner, which produces the positioned error.
    let close = end
    for (;;) {
      let k = close - 1
      while (src.charCodeAt(k) === 0x5c) k--
      if ((close - 1 - k) % 2 === 0) break
      close = src.indexOf('"', close + 1)
      if (close === -1) break
    }
    if (close !== -1) {
      const literal = src.slice(start - 1, close + 1)
      let decoded: unknown
      try {
        decoded = JSON.parse(literal)
      } catch {
        decoded = undefined
      }
      // Both checks: an escaped high surrogate followed by a raw low one decodes to a valid pair,
      // but the raw text itself held a lone surrogate.
      if (typeof decoded === 'string' && isWellFormed(decoded) && isWellFormed(literal)) {
        pos = close + 1
        return decoded
      }
    }
  }
  return parseStringSlow(start)
}

function parseStringSlow(start: number): string {
  const src_ = src // a local is cheaper to read in a tight loop than the module binding
  const len = src_.length
  let out = ''
  let chunk = start
  let i = start
  for (;;) {
    let c = src_.charCodeAt(i)
    // Skip plain characters quickly; everything below is the rare case.
    while (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0xd800 || c > 0xdfff)) c = src_.charCodeAt(++i)
    if (i >= len) {
      fail('syntax', `unterminated string starting at position ${start - 1}`, start - 1)
    }
    if (c === 0x22) {
      out += src.slice(chunk, i)
      pos = i + 1
      return out
    }
    if (c < 0x20) {
      fail('syntax', `unescaped control character U+${hex4(c)} in a string at position ${i}; write it as \\u${hex4(c).toLowerCase()}`, i)
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff) {
        const d = src.charCodeAt(i + 1)
        if (d >= 0xdc00 && d <= 0xdfff) {
          i += 2
          continue
        }
      }
      fail('invalid-unicode', `lone surrogate U+${hex4(c)} in a string at position ${i}; strings must be valid Unicode`, i)
    }
    if (c !== 0x5c) {
      i++
      continue
    }
    out += src.slice(chunk, i)
    const e = src.charCodeAt(i + 1)
    switch (e) {
      case 0x22:
        out += '"'
        i += 2
        break
      case 0x5c:
        out += '\\'
        i += 2
        break
      case 0x2f:
        out += '/'
        i += 2
        break
      case 0x62:
        out += '\b'
        i += 2
        break
      case 0x66:
        out += '\f'
        i += 2
        break
      case 0x6e:
        out += '\n'
        i += 2
        break
      case 0x72:
        out += '\r'
        i += 2
        break
      case 0x74:
        out += '\t'
        i += 2
        break
      case 0x75: {
        // u
        const unit = readHex4(i)
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // A high surrogate must be followed at once by an escaped low surrogate (raw or escaped
          // pairs are fine; a raw low surrogate after an escaped high one would be a raw lone one).
          const low = src.charCodeAt(i + 6) === 0x5c && src.charCodeAt(i + 7) === 0x75 ? readHex4(i + 6) : -1
          if (low < 0xdc00 || low > 0xdfff) {
            fail('invalid-unicode', `lone surrogate \\u${src.slice(i + 2, i + 6)} at position ${i}; strings must be valid Unicode`, i)
          }
          out += String.fromCharCode(unit, low)
          i += 12
        } else if (unit >= 0xdc00 && unit <= 0xdfff) {
          fail('invalid-unicode', `lone surrogate \\u${src.slice(i + 2, i + 6)} at position ${i}; strings must be valid Unicode`, i)
        } else {
          out += String.fromCharCode(unit)
          i += 6
        }
        break
      }
      default:
        fail(
          'syntax',
          `invalid escape ${i + 1 < src.length ? JSON.stringify(src.slice(i, i + 2)) : 'at end of input'} at position ${i}; valid escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX`,
          i,
        )
    }
    chunk = i
  }
}

function readHex4(at: number): number {
  let v = 0
  for (let k = 2; k < 6; k++) {
    const c = src.charCodeAt(at + k)
    let d: number
    if (c >= 0x30 && c <= 0x39) d = c - 0x30
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57
    else if (c >= 0x41 && c <= 0x46) d = c - 0x37
    else {
      return fail('syntax', `invalid \\u escape at position ${at}; expected four hexadecimal digits`, at)
    }
    v = v * 16 + d
  }
  return v
}

// Numbers ------------------------------------------------------------------------------------------

/** Smallest positive normal double: below it precision drops, so the fast path does not apply. */
const MIN_NORMAL = 2.2250738585072014e-308

function parseNumber(): number | bigint {
  const start = pos
  let i = pos
  let c = src.charCodeAt(i)
  const negative = c === 0x2d
  if (negative) c = src.charCodeAt(++i)
  // Integer part: "0" or a non-zero digit followed by digits (no leading zeros, RFC 8259).
  let value = 0
  const intStart = i
  if (c === 0x30) {
    c = src.charCodeAt(++i)
    if (c >= 0x30 && c <= 0x39) {
      fail('syntax', `number at position ${start} has a leading zero; write it without one`, start)
    }
  } else if (c >= 0x31 && c <= 0x39) {
    do {
      value = value * 10 + (c - 0x30)
      c = src.charCodeAt(++i)
    } while (c >= 0x30 && c <= 0x39)
  } else {
    fail('syntax', `unexpected ${describeChar(i)} at position ${i}; expected a digit after "-"`, i)
  }
  const intDigits = i - intStart
  let isInteger = true
  if (c === 0x2e) {
    // .
    isInteger = false
    c = src.charCodeAt(++i)
    if (!(c >= 0x30 && c <= 0x39)) {
      fail('syntax', `unexpected ${describeChar(i)} at position ${i}; expected a digit after the decimal point`, i)
    }
    do c = src.charCodeAt(++i)
    while (c >= 0x30 && c <= 0x39)
  }
  if (c === 0x65 || c === 0x45) {
    // e E
    isInteger = false
    c = src.charCodeAt(++i)
    if (c === 0x2b || c === 0x2d) c = src.charCodeAt(++i)
    if (!(c >= 0x30 && c <= 0x39)) {
      fail('syntax', `unexpected ${describeChar(i)} at position ${i}; expected a digit in the exponent`, i)
    }
    do c = src.charCodeAt(++i)
    while (c >= 0x30 && c <= 0x39)
  }
  pos = i
  // Up to 15 integer digits accumulate exactly (< 2^53), so the common case needs no slice.
  if (isInteger && intDigits <= 15) return negative ? -value : value
  const text = src.slice(start, i)
  const n = Number(text)
  if (isInteger) {
    if (n <= Number.MAX_SAFE_INTEGER && n >= -Number.MAX_SAFE_INTEGER) return n
    if (exactIntegers) {
      const big = BigInt(text)
      if (big >= INT64_MIN && big <= INT64_MAX) return big
    }
  } else if (n !== 0 && Math.abs(n) >= MIN_NORMAL && Number.isFinite(n) && significantDigits(text) <= 15) {
    // Any decimal with at most 15 significant digits survives decimal -> double -> shortest
    // decimal unchanged while the double is normal (DBL_DIG = 15).
    return n
  }
  checkExact(text, n, start)
  return n
}

/** Digits from the first to the last non-zero digit of the mantissa (also strict-json-rows.ts's rule). */
export function significantDigits(text: string): number {
  let first = -1
  let last = -1
  let count = 0
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k)
    if (c === 0x65 || c === 0x45) break
    if (c < 0x30 || c > 0x39) continue
    if (c !== 0x30) {
      if (first < 0) first = count
      last = count
    }
    count++
  }
  return first < 0 ? 0 : last - first + 1
}

function checkExact(text: string, n: number, at: number): void {
  if (!Number.isFinite(n)) {
    fail(
      'inexact-number',
      `number ${shorten(text)} at position ${at} is out of range for a JSON number (a 64-bit double); send it as a string`,
      at,
    )
  }
  // Text written by a JS client (JSON.stringify) is already the shortest round-trip form.
  if (String(n) === text) return
  const written = decimalValue(text)
  const stored = decimalValue(String(n))
  if (written.digits === stored.digits && written.exponent === stored.exponent) return
  const wouldBe = String(n)
  const hint = /^-?[0-9]+$/.test(text)
    ? `integers beyond ±${Number.MAX_SAFE_INTEGER} are not all representable; send it as a string`
    : 'send fewer significant digits, or a string'
  fail(
    'inexact-number',
    `number ${shorten(text)} at position ${at} cannot be represented exactly (it would become ${wouldBe}); ${hint}`,
    at,
  )
}

function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

/**
 * The exact decimal value of a number's text as `0.digits × 10^exponent` with no leading or
 * trailing zeros in `digits` (zero is digits "" and exponent 0). The sign is ignored: it is the same
 * for the text and the parsed double, and -0 equals 0. Works for JSON number text and for the output
 * of Number.prototype.toString ("1e+21", "1.5e-7").
 */
function decimalValue(text: string): { digits: string; exponent: number } {
  let s = text
  if (s.charCodeAt(0) === 0x2d) s = s.slice(1)
  let exp = 0
  const e = s.search(/[eE]/)
  if (e >= 0) {
    exp = Number(s.slice(e + 1))
    s = s.slice(0, e)
  }
  const dot = s.indexOf('.')
  const intPart = dot >= 0 ? s.slice(0, dot) : s
  const frac = dot >= 0 ? s.slice(dot + 1) : ''
  let digits = intPart + frac
  let pointAt = intPart.length // value = 0.digits × 10^(pointAt + exp) before stripping
  const lead = digits.search(/[1-9]/)
  if (lead < 0) return { digits: '', exponent: 0 }
  digits = digits.slice(lead)
  pointAt -= lead
  digits = digits.replace(/0+$/, '')
  return { digits, exponent: pointAt + exp }
}
