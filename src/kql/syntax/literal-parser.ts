/**
 * @module
 * Literals: typed literals (`datetime(...)`, `long(null)`, `guid(...)`), `typeof(T)` arguments and
 * the JSON-like content of `dynamic(...)` (issue 19 item 6: split out of the expression parser,
 * which extends this class).
 */
import type { KqlError } from '../kql-error.js'
import { canonLong, type Long, longNeg } from '../long.js'
import { type DynamicValue, type KqlValue, parseTypeName } from '../types.js'
import { formatDateTime, formatTimespan, parseDateTime, parseTimespan } from '../values.js'
import type * as A from './ast.js'
import { TokenStream } from './token-stream.js'

/** Deepest expression nesting accepted (parentheses, calls, unary operators). */
export const MAX_NESTING = 256

/** Type names that read as a typed literal when a parenthesis follows (`int(5)`, `dynamic([])`). */
export const TYPED_LITERALS = new Set([
  'bool',
  'boolean',
  'int',
  'int32',
  'long',
  'int64',
  'real',
  'double',
  'float',
  'decimal',
  'datetime',
  'date',
  'timespan',
  'time',
  'guid',
  'uuid',
  'uniqueid',
  'dynamic',
])

const GUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

export class LiteralParser extends TokenStream {
  /** Nesting depth of expressions and dynamic values being parsed: a guard against stack exhaustion. */
  depth = 0

  /**
   * `typeof(T)` as a function argument (extract(..., typeof(long))): the type's canonical name as
   * a string constant, which is how the function library reads type arguments.
   */
  parseTypeofArgument(): A.LiteralExpr {
    const t = this.advance()
    const name = this.peek(1)
    if (name.kind === 'ident' && parseTypeName(name.text) && this.isPunct(')', 2)) {
      this.advance()
      this.advance()
      this.advance()
      return { kind: 'Literal', start: t.start, end: this.lastEnd, type: 'string', value: parseTypeName(name.text)! }
    }
    // a schema such as typeof(*, x:long) (plugin arguments): kept as its text
    const raw = this.rawParenContent()
    return { kind: 'Literal', start: t.start, end: this.lastEnd, type: 'string', value: `typeof(${raw.text})` }
  }

  parseTypedLiteral(): A.LiteralExpr | A.CallExpr {
    const t = this.advance()
    const type = parseTypeName(t.text)!
    if (type === 'dynamic') {
      this.expectPunct('(')
      const value = this.parseDynamicValue()
      this.expectPunct(')', 'to close dynamic(...)')
      return { kind: 'Literal', start: t.start, end: this.lastEnd, type, value }
    }
    const raw = this.rawParenContent()
    let text = raw.text.trim()
    const at = raw.start + (raw.text.length - raw.text.trimStart().length)
    const fail = (what: string): KqlError => this.error(at, `invalid ${t.text} literal '${text}': expected ${what}`)
    if (text.toLowerCase() === 'null') return { kind: 'Literal', start: t.start, end: this.lastEnd, type, value: null }
    // datetime() is the current time (the documentation's literal table)
    if (text === '' && type === 'datetime')
      return { kind: 'Call', start: t.start, end: this.lastEnd, name: 'now', nameEnd: t.end, args: [] }
    let value: KqlValue
    switch (type) {
      case 'bool': {
        const l = text.toLowerCase()
        if (l === 'true' || l === '1') value = true
        else if (l === 'false' || l === '0') value = false
        else throw fail('true, false or null')
        break
      }
      case 'int':
      case 'long': {
        const n = parseIntegerText(text)
        if (n === undefined) throw fail('an integer or null')
        if (type === 'int' && (n < -2147483648 || n > 2147483647)) throw fail('a value in the int range')
        value = n
        break
      }
      case 'real':
      case 'decimal': {
        const n = parseRealText(text)
        if (n === undefined) throw fail('a number, nan, inf or null')
        value = n
        break
      }
      case 'datetime': {
        if ((text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'"))) text = text.slice(1, -1)
        const ticks = parseDateTimeLiteral(text)
        if (ticks === null) throw fail('a date such as 2024-01-31 or 2024-01-31T10:00:00Z')
        value = ticks
        break
      }
      case 'timespan': {
        const ticks = parseTimespan(text)
        if (ticks === null) throw fail('a timespan such as 1d, 02:30:00 or 1.12:00:00')
        value = ticks
        break
      }
      case 'guid': {
        let g = text
        if ((g.startsWith('"') && g.endsWith('"')) || (g.startsWith("'") && g.endsWith("'"))) g = g.slice(1, -1)
        if (g.startsWith('{') && g.endsWith('}')) g = g.slice(1, -1)
        if (!GUID_RE.test(g)) throw fail('a guid such as 74be27de-1e4e-49d9-b579-fe0b331d3642')
        value = g.toLowerCase()
        break
      }
      default:
        throw fail('a literal')
    }
    return { kind: 'Literal', start: t.start, end: this.lastEnd, type, value }
  }

  /** The JSON-like content of `dynamic(...)`, nested at most MAX_NESTING levels (issue 15). */
  parseDynamicValue(): DynamicValue {
    if (++this.depth > MAX_NESTING) {
      throw this.error(this.peek().start, `the dynamic literal is nested more than ${MAX_NESTING} levels deep`, 'unsupported')
    }
    try {
      return this.parseDynamicValueAt()
    } finally {
      this.depth--
    }
  }

  /** Objects, arrays, literals, typed literals. */
  parseDynamicValueAt(): DynamicValue {
    const t = this.peek()
    if (t.kind === 'punct') {
      if (t.text === '{') {
        this.advance()
        const obj: Record<string, DynamicValue> = {}
        const property = (): void => {
          const k = this.peek()
          if (k.kind !== 'string' && k.kind !== 'ident') throw this.expected('a property name in the dynamic object')
          this.advance()
          this.expectPunct(':', 'after the property name')
          obj[k.text] = this.parseDynamicValue()
        }
        this.list(property, { close: '}', trailing: true })
        this.expectPunct('}', 'to close the dynamic object')
        return obj
      }
      if (t.text === '[') {
        this.advance()
        const arr = this.list(() => this.parseDynamicValue(), { close: ']', trailing: true })
        this.expectPunct(']', 'to close the dynamic array')
        return arr
      }
      if (t.text === '-' || t.text === '+') {
        this.advance()
        const n = this.peek()
        if (n.kind === 'long') {
          this.advance()
          // an exact long, as everywhere (README "The value of a long")
          const v = n.value as Long
          return t.text === '-' ? longNeg(v) : v
        }
        if (n.kind === 'real') {
          this.advance()
          const v = Number(n.value)
          return t.text === '-' ? -v : v
        }
        if (n.kind === 'timespan') {
          this.advance()
          return formatTimespan(t.text === '-' ? -(n.value as bigint) : (n.value as bigint))
        }
        throw this.expected('a number')
      }
    }
    if (t.kind === 'quotedIdent') {
      // ['a'] is a one-element array here
      this.advance()
      return [t.text]
    }
    if (t.kind === 'string') {
      this.advance()
      return t.text
    }
    if (t.kind === 'long') {
      this.advance()
      return t.value as Long
    }
    if (t.kind === 'real') {
      this.advance()
      return Number(t.value)
    }
    if (t.kind === 'timespan') {
      this.advance()
      return formatTimespan(t.value as bigint)
    }
    if (t.kind === 'ident') {
      switch (t.text) {
        case 'true':
        case 'True':
          this.advance()
          return true
        case 'false':
        case 'False':
          this.advance()
          return false
        case 'null':
          this.advance()
          return null
        default:
          if (TYPED_LITERALS.has(t.text) && this.isPunct('(', 1)) {
            const lit = this.parseTypedLiteral()
            if (lit.kind !== 'Literal') throw this.error(lit.start, 'a dynamic literal cannot contain datetime()')
            return literalToDynamic(lit)
          }
      }
    }
    throw this.expected('a dynamic value (object, array, number, string, true, false or null)')
  }
}

/** `long(...)`/`int(...)` text as an exact long (it was a double: `long(2^53 + 1)` rounded, `long(-2^63)` flipped sign). */
function parseIntegerText(text: string): Long | undefined {
  const m = /^([+-]?)\s*(0[xX][0-9a-fA-F]+|\d+)$/.exec(text)
  if (!m) return undefined
  const v = BigInt.asIntN(64, BigInt(m[2]!))
  return canonLong(m[1] === '-' ? -v : v)
}

function parseRealText(text: string): number | undefined {
  const l = text.toLowerCase().replace(/\s+/g, '')
  if (l === 'nan') return NaN
  if (l === 'inf' || l === '+inf' || l === 'infinity' || l === '+infinity') return Infinity
  if (l === '-inf' || l === '-infinity') return -Infinity
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(l)) return undefined
  return Number(l)
}

/** datetime(...) text: everything parseDateTime accepts, plus `2025, 6, 14[, h, m, s]`. */
function parseDateTimeLiteral(text: string): bigint | null {
  const parsed = parseDateTime(text)
  if (parsed !== null) return parsed
  const m = /^(\d{4})\s*,\s*(\d{1,2})\s*,\s*(\d{1,2})(?:\s*,\s*(\d{1,2})(?:\s*,\s*(\d{1,2})(?:\s*,\s*(\d{1,2}))?)?)?$/.exec(text)
  if (!m) return null
  const pad = (s: string | undefined): string => (s ?? '0').padStart(2, '0')
  return parseDateTime(`${m[1]}-${pad(m[2])}-${pad(m[3])}T${pad(m[4])}:${pad(m[5])}:${pad(m[6])}Z`)
}

function literalToDynamic(lit: A.LiteralExpr): DynamicValue {
  const v = lit.value
  if (v === null) return null
  switch (lit.type) {
    case 'datetime':
      return formatDateTime(v as bigint)
    case 'timespan':
      return formatTimespan(v as bigint)
    case 'long':
      // an exact long (canonical form) inside dynamic, as the plain literal
      return v as Long
    default:
      return typeof v === 'bigint' ? Number(v) : (v as DynamicValue)
  }
}
