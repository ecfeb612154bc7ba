/**
 * @module
 * The KQL tokenizer: an on-demand cursor over the query text (the parser pulls tokens one at a time
 * and can re-read raw text, which `datetime(...)`, `guid(...)` and friends need).
 *
 * Char-code scanning, no regular expressions: compile time is a product target (design §12).
 */
import { KqlError, positionAt } from '../kql-error.js'
import { canonLong } from '../long.js'
import { scaleDecimal, timespanUnit } from '../values.js'

export type TokenKind =
  /** Identifier or keyword (`where`, `Timestamp`, `$left`); keywords are contextual in KQL. */
  | 'ident'
  /** `['name']` or `["name"]`: an identifier spelled as a string; `text` is the name. */
  | 'quotedIdent'
  /** Integer literal (long). `value` is the number. */
  | 'long'
  /** Real literal (`1.5`, `1e3`, `10.`). `value` is the number. */
  | 'real'
  /** String literal; `text` is the decoded value. */
  | 'string'
  /** Timespan literal (`1d`, `30m`, `100ms`); `value` is ticks. */
  | 'timespan'
  /** Punctuation and operators; `text` is the symbol. */
  | 'punct'
  | 'eof'

export interface Token {
  readonly kind: TokenKind
  /** Offset of the first character. */
  readonly start: number
  /** Offset just past the last character. */
  readonly end: number
  /** Identifier name, punctuation symbol, decoded string, or the literal's source text. */
  readonly text: string
  /** Value of long literals (canonical long, long.ts), reals (number) and timespans (bigint ticks). */
  readonly value?: number | bigint
}

enum C {
  Tab = 9,
  LF = 10,
  CR = 13,
  Space = 32,
  Bang = 33,
  DQuote = 34,
  Dollar = 36,
  Percent = 37,
  SQuote = 39,
  LParen = 40,
  RParen = 41,
  Star = 42,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Slash = 47,
  D0 = 48,
  D9 = 57,
  Colon = 58,
  Semi = 59,
  Lt = 60,
  Eq = 61,
  Gt = 62,
  Question = 63,
  At = 64,
  A = 65,
  E = 69,
  F = 70,
  H = 72,
  X = 88,
  Z = 90,
  LBracket = 91,
  Backslash = 92,
  RBracket = 93,
  Underscore = 95,
  Backtick = 96,
  a = 97,
  e = 101,
  f = 102,
  h = 104,
  x = 120,
  z = 122,
  LBrace = 123,
  Pipe = 124,
  RBrace = 125,
  Tilde = 126,
}

function isDigit(c: number): boolean {
  return c >= C.D0 && c <= C.D9
}

function isIdentStart(c: number): boolean {
  return (c >= C.a && c <= C.z) || (c >= C.A && c <= C.Z) || c === C.Underscore || c === C.Dollar || (c > 127 && isUnicodeLetter(c))
}

function isIdentPart(c: number): boolean {
  return (c >= C.a && c <= C.z) || (c >= C.A && c <= C.Z) || c === C.Underscore || isDigit(c) || (c > 127 && isUnicodeLetter(c))
}

function isUnicodeLetter(c: number): boolean {
  return /\p{L}/u.test(String.fromCharCode(c))
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= C.a && c <= C.f) || (c >= C.A && c <= C.F)
}

/** Two-character operators, looked up by their first character. */
const TWO_CHAR: Readonly<Record<string, readonly string[]>> = {
  '=': ['==', '=~', '=>'],
  '!': ['!=', '!~'],
  '<': ['<=', '<>'],
  '>': ['>='],
  '.': ['..'],
}

const SINGLE = new Set(['|', '(', ')', '[', ']', '{', '}', ',', ';', '.', ':', '=', '!', '<', '>', '+', '-', '*', '/', '%', '~', '?', '@'])

export class Lexer {
  /** Offset of the next unread character. */
  pos = 0

  constructor(readonly text: string) {}

  error(offset: number, detail: string): KqlError {
    return new KqlError('syntax', detail, positionAt(this.text, offset))
  }

  /** Skips whitespace and `//` comments. */
  skipTrivia(): void {
    const s = this.text
    const n = s.length
    let i = this.pos
    while (i < n) {
      const c = s.charCodeAt(i)
      if (c === C.Space || c === C.Tab || c === C.LF || c === C.CR || c === 0xa0 || c === 0xfeff || c === 0x2028 || c === 0x2029) {
        i++
      } else if (c === C.Slash && s.charCodeAt(i + 1) === C.Slash) {
        i += 2
        while (i < n && s.charCodeAt(i) !== C.LF) i++
      } else {
        break
      }
    }
    this.pos = i
  }

  next(): Token {
    this.skipTrivia()
    const s = this.text
    const start = this.pos
    if (start >= s.length) return { kind: 'eof', start, end: start, text: '' }
    const c = s.charCodeAt(start)

    if (isDigit(c) || (c === C.Dot && isDigit(s.charCodeAt(start + 1)))) return this.number(start)
    if (c === C.SQuote || c === C.DQuote) return this.quoted(start, start, false)
    if (c === C.Backtick && s.startsWith('```', start)) return this.multiline(start)
    if (c === C.At && (s.charCodeAt(start + 1) === C.SQuote || s.charCodeAt(start + 1) === C.DQuote)) {
      return this.quoted(start, start + 1, true)
    }
    if ((c === C.h || c === C.H) && start + 1 < s.length) {
      // h'...' / H"..." / h@'...': obfuscated strings are ordinary strings to us
      const c1 = s.charCodeAt(start + 1)
      if (c1 === C.SQuote || c1 === C.DQuote) return this.quoted(start, start + 1, false)
      if (c1 === C.At && (s.charCodeAt(start + 2) === C.SQuote || s.charCodeAt(start + 2) === C.DQuote)) {
        return this.quoted(start, start + 2, true)
      }
    }
    if (isIdentStart(c)) {
      let i = start + 1
      while (i < s.length && isIdentPart(s.charCodeAt(i))) i++
      this.pos = i
      return { kind: 'ident', start, end: i, text: s.slice(start, i) }
    }
    if (c === C.LBracket) {
      // ['name'] / ["name"]: a bracketed identifier, only when a string literal is the sole content
      const save = this.pos
      this.pos = start + 1
      this.skipTrivia()
      const q = s.charCodeAt(this.pos)
      if (
        q === C.SQuote ||
        q === C.DQuote ||
        (q === C.At && (s.charCodeAt(this.pos + 1) === C.SQuote || s.charCodeAt(this.pos + 1) === C.DQuote))
      ) {
        const str = q === C.At ? this.quoted(this.pos, this.pos + 1, true) : this.quoted(this.pos, this.pos, false)
        this.skipTrivia()
        if (s.charCodeAt(this.pos) === C.RBracket) {
          this.pos++
          return { kind: 'quotedIdent', start, end: this.pos, text: str.text }
        }
      }
      this.pos = save + 1
      return { kind: 'punct', start, end: start + 1, text: '[' }
    }
    const ch = s[start]!
    const twos = TWO_CHAR[ch]
    if (twos) {
      const two = s.slice(start, start + 2)
      if (twos.includes(two)) {
        this.pos = start + 2
        return { kind: 'punct', start, end: start + 2, text: two }
      }
    }
    if (SINGLE.has(ch)) {
      this.pos = start + 1
      return { kind: 'punct', start, end: start + 1, text: ch }
    }
    throw this.error(start, `unexpected character '${ch}'`)
  }

  private number(start: number): Token {
    const s = this.text
    let i = start
    if (s.charCodeAt(i) === C.D0 && (s.charCodeAt(i + 1) === C.x || s.charCodeAt(i + 1) === C.X)) {
      i += 2
      const digitsStart = i
      while (i < s.length && isHexDigit(s.charCodeAt(i))) i++
      if (i === digitsStart) throw this.error(start, 'expected hexadecimal digits after 0x')
      if (i < s.length && isIdentPart(s.charCodeAt(i))) throw this.error(start, `invalid number '${s.slice(start, i + 1)}'`)
      this.pos = i
      const text = s.slice(start, i)
      return { kind: 'long', start, end: i, text, value: canonLong(BigInt(text)) }
    }
    let isReal = false
    while (i < s.length && isDigit(s.charCodeAt(i))) i++
    if (s.charCodeAt(i) === C.Dot && s.charCodeAt(i + 1) !== C.Dot) {
      const after = s.charCodeAt(i + 1)
      if (isDigit(after)) {
        isReal = true
        i++
        while (i < s.length && isDigit(s.charCodeAt(i))) i++
      } else if (!isIdentStart(after)) {
        // `10.` is a real (10./5)
        isReal = true
        i++
      }
    }
    const mantissaEnd = i
    const ce = s.charCodeAt(i)
    if (ce === C.e || ce === C.E) {
      let j = i + 1
      const sign = s.charCodeAt(j)
      if (sign === C.Plus || sign === C.Minus) j++
      if (isDigit(s.charCodeAt(j))) {
        while (j < s.length && isDigit(s.charCodeAt(j))) j++
        isReal = true
        i = j
      }
    }
    if (i < s.length && isIdentStart(s.charCodeAt(i)) && s.charCodeAt(i) !== C.Dollar) {
      // a timespan literal: 1d, 2h, 30m, 10s, 100ms, 1tick, 1.5h
      let j = i
      while (j < s.length && isIdentPart(s.charCodeAt(j))) j++
      const unitText = s.slice(i, j)
      const unit = timespanUnit(unitText)
      const numberText = s.slice(start, i)
      if (unit === undefined || mantissaEnd !== i) {
        throw this.error(start, `invalid literal '${s.slice(start, j)}': expected a number or a timespan such as 1d, 2h, 30m, 10s, 100ms`)
      }
      const ticks = scaleDecimal(numberText, unit)
      if (ticks === null) throw this.error(start, `invalid timespan literal '${s.slice(start, j)}'`)
      this.pos = j
      return { kind: 'timespan', start, end: j, text: s.slice(start, j), value: ticks }
    }
    this.pos = i
    const text = s.slice(start, i)
    // A long is 64 bits: a longer integer literal is an error, not a silently rounded value (which
    // the storage engines would then refuse to bind). 2^63 itself is allowed for `-9223372036854775808`.
    if (!isReal && BigInt(text) > 9223372036854775808n)
      throw this.error(
        start,
        `the integer literal ${text.length > 40 ? `${text.slice(0, 40)}…` : text} is out of range for long (at most 9223372036854775807)`,
      )
    return { kind: isReal ? 'real' : 'long', start, end: i, text, value: isReal ? Number(text) : canonLong(BigInt(text)) }
  }

  /**
   * A quoted string starting at `quoteAt` (the token starts at `start`, which differs for `@'..'` and
   * `h'..'`). Verbatim strings have no escapes; a doubled quote stands for one quote.
   */
  private quoted(start: number, quoteAt: number, verbatim: boolean): Token {
    const s = this.text
    const q = s.charCodeAt(quoteAt)
    let i = quoteAt + 1
    let out = ''
    let chunk = i
    for (;;) {
      if (i >= s.length || s.charCodeAt(i) === C.LF || s.charCodeAt(i) === C.CR) {
        throw this.error(start, 'unterminated string literal: expected a closing quote on the same line')
      }
      const c = s.charCodeAt(i)
      if (c === q) {
        if (verbatim && s.charCodeAt(i + 1) === q) {
          out += s.slice(chunk, i + 1)
          i += 2
          chunk = i
          continue
        }
        out += s.slice(chunk, i)
        i++
        break
      }
      if (c === C.Backslash && !verbatim) {
        out += s.slice(chunk, i)
        const e = s[i + 1]
        i += 2
        switch (e) {
          case 'n':
            out += '\n'
            break
          case 't':
            out += '\t'
            break
          case 'r':
            out += '\r'
            break
          case '0':
            out += '\0'
            break
          case '\\':
            out += '\\'
            break
          case "'":
            out += "'"
            break
          case '"':
            out += '"'
            break
          case 'u': {
            const hex = s.slice(i, i + 4)
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw this.error(i - 2, 'invalid \\u escape: expected 4 hexadecimal digits')
            out += String.fromCharCode(parseInt(hex, 16))
            i += 4
            break
          }
          case 'x': {
            const hex = s.slice(i, i + 2)
            if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw this.error(i - 2, 'invalid \\x escape: expected 2 hexadecimal digits')
            out += String.fromCharCode(parseInt(hex, 16))
            i += 2
            break
          }
          case undefined:
            throw this.error(start, 'unterminated string literal')
          default:
            // Kusto rejects unknown escapes; keeping them verbatim never changes a valid query's meaning
            out += '\\' + e
        }
        chunk = i
        continue
      }
      i++
    }
    this.pos = i
    return { kind: 'string', start, end: i, text: out }
  }

  private multiline(start: number): Token {
    const s = this.text
    const close = s.indexOf('```', start + 3)
    if (close < 0) throw this.error(start, 'unterminated multi-line string: expected ```')
    this.pos = close + 3
    return { kind: 'string', start, end: close + 3, text: s.slice(start + 3, close) }
  }
}
