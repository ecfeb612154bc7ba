/**
 * @module
 * A one-pass reader for the common shape of a bulk body: a JSON array of flat objects, or NDJSON
 * (one object per line), read from UTF-8 bytes straight into one array of cells per row for a fixed
 * list of member names, with no object per row in between. Ingest reads millions of rows a minute
 * this way; parsing them into objects and walking those again cost more than storing them.
 *
 * It reads a SUBSET of strict JSON and answers `undefined`, never an error, for anything outside
 * it. The caller then takes the reference path (parseStrictJson and its own checks), which decides
 * the body and words the error. So the reader carries no error messages, and a body it does read
 * must mean exactly what the reference path makes of it (a differential test holds it to that).
 * It gives up on: a byte-order mark, invalid UTF-8, anything but an array (or lines) of objects,
 * an unknown, duplicate or escaped member name, a string that is or decodes to anything with NUL or
 * a lone surrogate, a number parseStrictJson would have to check digit by digit (more than 15
 * significant digits, subnormal, zero written with a fraction or exponent, integers beyond
 * ±(2^53 − 1)), a nested value deeper than the reference allows or spanning lines of NDJSON, a row
 * the cells refuse, and trailing data.
 */
import { DEFAULT_MAX_DEPTH, type ExactJsonValue, parseStrictJsonValueAt, StrictJsonError, significantDigits } from './strict-json.js'
import { findNulCharacter, isWellFormed } from './text-rules.js'

/** What a cell function returns for a value that does not fit its column: the reader gives up. */
export const NO_FIT: unique symbol = Symbol('no fit')
export type NoFit = typeof NO_FIT

export interface FlatRowShape {
  /** The member names, in the order of a row's cells. */
  readonly names: readonly string[]
  /** Per name: the cell for a value as parseStrictJson (exactIntegers) gives it, or NO_FIT. */
  readonly cells: readonly ((value: ExactJsonValue) => unknown)[]
  /** Per name: the cell of a row without that member, or NO_FIT when the member is required. */
  readonly absent: readonly unknown[]
}

/** `array`: one JSON array of objects. `lines`: NDJSON, one object per line, blank lines skipped. */
export type FlatRowLayout = 'array' | 'lines'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Thrown inside the reader to give up; never leaves it. */
const GIVE_UP = new Error('not the common shape')

/** 10^0 … 10^15, each exact as a double. */
const POWERS_OF_TEN = [1]
for (let k = 1; k <= 15; k++) POWERS_OF_TEN.push(POWERS_OF_TEN[k - 1]! * 10)

/** Smallest positive normal double, as in parseStrictJson's number rule. */
const MIN_NORMAL = 2.2250738585072014e-308

/**
 * The rows of `bytes` as cells of `shape`, or undefined when the body is not of the shape this
 * reader covers (the caller then parses it the reference way, which accepts it or says why not).
 */
export function readFlatRows(bytes: Uint8Array, layout: FlatRowLayout, shape: FlatRowShape): unknown[][] | undefined {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return undefined
  }
  try {
    const reader = new FlatRowReader(text, layout === 'lines', shape)
    return reader.lines ? reader.readLines(shape) : reader.readArray(shape)
  } catch (error) {
    if (error === GIVE_UP || error instanceof StrictJsonError) return undefined
    throw error
  }
}

function giveUp(): never {
  throw GIVE_UP
}

/** One read of one body; its state lives in fields (cheaper to reach than closure or module bindings). */
class FlatRowReader {
  at = 0
  /** Per name: the row stamp of the row that last named it (duplicate member names). */
  readonly seen: number[]
  stamp = 0
  readonly names: readonly string[]
  /** Per name: whether its raw text in a body can be compared as is (no escapes needed, not __proto__). */
  readonly plain: boolean[]

  constructor(
    readonly text: string,
    readonly lines: boolean,
    shape: FlatRowShape,
  ) {
    this.names = shape.names
    this.plain = shape.names.map((name) => name !== '__proto__' && !/[\u0000-\u001f"\\\ud800-\udfff]/.test(name))
    this.seen = shape.names.map(() => 0)
  }

  /** JSON whitespace; inside an NDJSON row a line feed ends the line, so there it is the end of the shape. */
  skipSpace(): void {
    let c = this.text.charCodeAt(this.at)
    while (c === 0x20 || c === 0x0d || c === 0x09 || (c === 0x0a && !this.lines)) c = this.text.charCodeAt(++this.at)
  }

  readArray(shape: FlatRowShape): unknown[][] {
    const rows: unknown[][] = []
    this.skipSpace()
    if (this.text.charCodeAt(this.at) !== 0x5b) giveUp() // [
    this.at++
    this.skipSpace()
    if (this.text.charCodeAt(this.at) === 0x5d) this.at++
    else {
      for (;;) {
        rows.push(this.readRow(shape))
        this.skipSpace()
        const c = this.text.charCodeAt(this.at++)
        if (c === 0x2c) this.skipSpace()
        else if (c === 0x5d) break
        else giveUp()
      }
    }
    this.skipSpace()
    if (this.at !== this.text.length) giveUp()
    return rows
  }

  readLines(shape: FlatRowShape): unknown[][] {
    const rows: unknown[][] = []
    const end = this.text.length
    for (;;) {
      let c = this.text.charCodeAt(this.at)
      while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = this.text.charCodeAt(++this.at)
      if (this.at >= end) return rows
      rows.push(this.readRow(shape))
      this.skipSpace()
      if (this.at < end && this.text.charCodeAt(this.at) !== 0x0a) giveUp()
    }
  }

  readRow(shape: FlatRowShape): unknown[] {
    if (this.text.charCodeAt(this.at) !== 0x7b) giveUp() // {
    this.at++
    const row = shape.absent.slice()
    const cells = shape.cells
    const count = this.names.length
    const rowStamp = ++this.stamp
    let next = 0
    this.skipSpace()
    if (this.text.charCodeAt(this.at) === 0x7d) this.at++
    else {
      for (;;) {
        const k = this.memberIndex(next, count)
        if (this.seen[k] === rowStamp) giveUp()
        this.seen[k] = rowStamp
        next = k + 1 === count ? 0 : k + 1
        this.skipSpace()
        if (this.text.charCodeAt(this.at) !== 0x3a) giveUp() // :
        this.at++
        this.skipSpace()
        const cell = cells[k]!(this.readValue())
        if (cell === NO_FIT) giveUp()
        row[k] = cell
        this.skipSpace()
        const c = this.text.charCodeAt(this.at++)
        if (c === 0x2c) this.skipSpace()
        else if (c === 0x7d) break
        else giveUp()
      }
    }
    for (let k = 0; k < count; k++) if (row[k] === NO_FIT) giveUp()
    return row
  }

  /** The index of the member name at `at` (consumed), trying the one that usually comes next first. */
  memberIndex(guess: number, count: number): number {
    if (this.text.charCodeAt(this.at) !== 0x22) giveUp()
    const from = this.at + 1
    const text = this.text
    for (let tried = 0, k = guess; tried < count; tried++, k = k + 1 === count ? 0 : k + 1) {
      const name = this.names[k]!
      const length = name.length
      if (!this.plain[k] || text.charCodeAt(from + length) !== 0x22) continue
      let j = 0
      while (j < length && text.charCodeAt(from + j) === name.charCodeAt(j)) j++
      if (j === length) {
        this.at = from + length + 1
        return k
      }
    }
    // Unknown, or a known name spelled with escapes: the reference path decides.
    return giveUp()
  }

  readValue(): ExactJsonValue {
    const c = this.text.charCodeAt(this.at)
    if (c === 0x22) return this.readString()
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.readNumber()
    if (c === 0x74 && this.text.startsWith('true', this.at)) {
      this.at += 4
      return true
    }
    if (c === 0x66 && this.text.startsWith('false', this.at)) {
      this.at += 5
      return false
    }
    if (c === 0x6e && this.text.startsWith('null', this.at)) {
      this.at += 4
      return null
    }
    if (c === 0x7b || c === 0x5b) return this.readNested()
    return giveUp()
  }

  readString(): string {
    const start = this.at + 1
    let i = start
    let c = this.text.charCodeAt(i)
    // Raw surrogates are well-formed pairs here: the text came from a fatal UTF-8 decode.
    while (c >= 0x20 && c !== 0x22 && c !== 0x5c) c = this.text.charCodeAt(++i)
    if (c !== 0x22) return this.readEscapedString(start, i)
    this.at = i + 1
    return this.text.slice(start, i)
  }

  /** A string with escapes (or a control character, or no end): decoded natively, or given up. */
  readEscapedString(start: number, from: number): string {
    let close = this.text.indexOf('"', from)
    for (;;) {
      if (close === -1) giveUp()
      let k = close - 1
      while (this.text.charCodeAt(k) === 0x5c) k--
      if ((close - 1 - k) % 2 === 0) break
      close = this.text.indexOf('"', close + 1)
    }
    let decoded: unknown
    try {
      decoded = JSON.parse(this.text.slice(start - 1, close + 1))
    } catch {
      giveUp()
    }
    if (typeof decoded !== 'string' || !isWellFormed(decoded) || decoded.includes('\u0000')) giveUp()
    this.at = close + 1
    return decoded
  }

  /** A number parseStrictJson returns without its exactness check, with the value it returns; else give up. */
  readNumber(): number {
    const start = this.at
    let i = this.at
    let c = this.text.charCodeAt(i)
    const negative = c === 0x2d
    if (negative) c = this.text.charCodeAt(++i)
    let value = 0
    const intStart = i
    if (c === 0x30) {
      c = this.text.charCodeAt(++i)
      if (c >= 0x30 && c <= 0x39) giveUp() // leading zero
    } else if (c >= 0x31 && c <= 0x39) {
      do {
        value = value * 10 + (c - 0x30)
        c = this.text.charCodeAt(++i)
      } while (c >= 0x30 && c <= 0x39)
    } else giveUp()
    const intDigits = i - intStart
    let isInteger = true
    let fractionDigits = 0
    if (c === 0x2e) {
      isInteger = false
      c = this.text.charCodeAt(++i)
      if (!(c >= 0x30 && c <= 0x39)) giveUp()
      const fractionStart = i
      do {
        value = value * 10 + (c - 0x30)
        c = this.text.charCodeAt(++i)
      } while (c >= 0x30 && c <= 0x39)
      fractionDigits = i - fractionStart
    }
    const exponent = c === 0x65 || c === 0x45
    if (exponent) {
      isInteger = false
      c = this.text.charCodeAt(++i)
      if (c === 0x2b || c === 0x2d) c = this.text.charCodeAt(++i)
      if (!(c >= 0x30 && c <= 0x39)) giveUp()
      do c = this.text.charCodeAt(++i)
      while (c >= 0x30 && c <= 0x39)
    }
    this.at = i
    if (intDigits + fractionDigits <= 15) {
      if (isInteger) return negative ? -value : value
      // Up to 15 digits without an exponent: the digits as an integer are exact, and so is a power
      // of ten up to 10^22, so their quotient is the correctly rounded double, which is what
      // Number() gives (parseStrictJson's rule for 15 significant digits then returns it as is).
      if (!exponent && value !== 0) return negative ? -value / POWERS_OF_TEN[fractionDigits]! : value / POWERS_OF_TEN[fractionDigits]!
    }
    const written = this.text.slice(start, i)
    const n = Number(written)
    if (isInteger) {
      if (n <= Number.MAX_SAFE_INTEGER && n >= -Number.MAX_SAFE_INTEGER) return n
    } else if (n !== 0 && Math.abs(n) >= MIN_NORMAL && Number.isFinite(n) && significantDigits(written) <= 15) return n
    return giveUp()
  }

  /** An object or array value (a dynamic column): parsed by the reference parser at its depth. */
  readNested(): ExactJsonValue {
    const start = this.at
    // The value sits inside the row object (and, for a JSON array, inside the array), as it would in
    // the whole body the reference path parses against DEFAULT_MAX_DEPTH.
    const { value, end } = parseStrictJsonValueAt(this.text, start, {
      exactIntegers: true,
      maxDepth: DEFAULT_MAX_DEPTH - (this.lines ? 1 : 2),
    })
    if (this.lines) {
      const lineFeed = this.text.indexOf('\n', start)
      if (lineFeed !== -1 && lineFeed < end) giveUp()
    }
    if (findNulCharacter(value) !== undefined) giveUp()
    this.at = end
    return value
  }
}
