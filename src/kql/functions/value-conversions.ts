/**
 * @module
 * Values between KQL types, shared by every function family: Kusto's text form of every value
 * (`tostring`), conversions (`tolong`, `todouble`, ...; also what `extract(..., typeof(T))` and
 * `parse ... with x:T` need), value ordering and Kusto's `has` term match. Split out of
 * function-helpers.ts (issue 19 item 6).
 */
import { dynamicJsonText, parseDynamicJson } from '../dynamic-json.js'
import { canonLong, type Long, longFromDouble, longFromText, longToBigInt, longToNumber } from '../long.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { dateTimeParts, formatDateTime, formatTimespan, MIN_DATETIME_TICKS, parseDateTime, parseTimespan } from '../values.js'

// ---------------------------------------------------------------------------------------------
// Text form of values (tostring)

/**
 * .NET-style shortest round-trip text of a real, as Kusto prints reals: exponent form when the
 * decimal exponent is >= 15 or < -4 (`1E+15`, `1E-05`; `0.0001` stays), `NaN`, `Infinity`, `-Infinity`.
 */
export function formatReal(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity'
  if (n === 0) return '0'
  const [mantissa, exponentText] = n.toExponential().split('e') as [string, string]
  const exponent = Number(exponentText)
  if (exponent >= 15 || exponent < -4) {
    const sign = exponent < 0 ? '-' : '+'
    return `${mantissa}E${sign}${String(Math.abs(exponent)).padStart(2, '0')}`
  }
  return String(n)
}

/** A decimal as .NET prints it: never in exponent form. */
function formatDecimal(n: number): string {
  if (!Number.isFinite(n)) return formatReal(n)
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString()
  const text = String(n)
  const m = /^(-?)(\d)(?:\.(\d+))?e-(\d+)$/.exec(text)
  // only tiny magnitudes come out in exponent form here: 1.5e-7 → 0.00000015
  return m ? `${m[1]}0.${'0'.repeat(Number(m[4]) - 1)}${m[2]}${m[3] ?? ''}` : text
}

/** Kusto's text form of a datetime inside tostring()/strcat(): ISO 8601 with seven fraction digits. */
export function datetimeToText(ticks: bigint): string {
  const p = dateTimeParts(ticks)
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0')
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}.${pad(p.fractionTicks, 7)}Z`
}

/** The text form of a long (exact for values beyond 2^53 only when they came in as bigint). */
function formatLong(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : Number.isFinite(n) ? BigInt(Math.trunc(n)).toString() : formatReal(n)
}

/**
 * Kusto's tostring(): null → "", bool → `true`/`false`, datetimes as `2024-05-01T12:30:00.0000000Z`,
 * timespans as `[-][d.]hh:mm:ss[.fffffff]`, reals as .NET prints them, dynamic strings without
 * quotes and other dynamic values as compact JSON. The single implementation for every family.
 */
export function valueToString(type: KqlType, value: KqlValue): string {
  if (value === null || value === undefined) return ''
  switch (type) {
    case 'string':
    case 'guid':
      return String(value)
    case 'bool':
      return value ? 'true' : 'false'
    case 'datetime':
      return typeof value === 'bigint' ? datetimeToText(value) : String(value)
    case 'timespan':
      return typeof value === 'bigint' ? formatTimespan(value) : String(value)
    case 'real':
      return typeof value === 'number' ? formatReal(value) : String(value)
    case 'decimal':
      return typeof value === 'number' ? formatDecimal(value) : String(value)
    case 'int':
    case 'long':
      return typeof value === 'number' ? formatLong(value) : String(value)
    case 'dynamic':
      return dynamicToText(value as DynamicValue)
  }
}

/** tostring() of a dynamic value: strings as-is, null as "", everything else as JSON. */
export function dynamicToText(value: DynamicValue): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'number') return dynamicNumberToText(value)
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  return dynamicToJson(value)
}

function dynamicNumberToText(n: number): string {
  return Number.isInteger(n) ? formatLong(n) : formatReal(n)
}

/** Compact JSON of a dynamic value (non-finite numbers as "NaN"/"Infinity" strings, longs with every digit). */
export function dynamicToJson(value: DynamicValue): string {
  return dynamicJsonText(value, formatReal)
}

/** A typed value as a dynamic value (datetimes and timespans become their text form). */
export function toDynamic(type: KqlType, value: KqlValue): DynamicValue {
  if (value === null || value === undefined) return null
  switch (type) {
    case 'datetime':
      return typeof value === 'bigint' ? formatDateTime(value) : (value as DynamicValue)
    case 'timespan':
      return typeof value === 'bigint' ? formatTimespan(value) : (value as DynamicValue)
    default:
      // a long beyond 2^53 stays a canonical bigint inside dynamic (README "The value of a long")
      return typeof value === 'bigint' && type !== 'long' && type !== 'dynamic' ? Number(value) : (value as DynamicValue)
  }
}

/**
 * Parses JSON text into a dynamic value. Returns `undefined` when the text is not JSON. Accepts
 * what Kusto's parser accepts beyond strict JSON: NaN/Infinity literals and single-quoted strings.
 */
export function parseJsonText(text: string): DynamicValue | undefined {
  try {
    return parseDynamicJson(text)
  } catch {
    const relaxed = relaxJson(text)
    if (relaxed === undefined) return undefined
    try {
      return parseDynamicJson(relaxed, (_k, v: unknown) =>
        typeof v === 'string' && v.startsWith('\u0000num:') ? Number(v.slice(5)) : v,
      ) as DynamicValue
    } catch {
      return undefined
    }
  }
}

/** Rewrites single-quoted strings and bare NaN/Infinity so JSON.parse accepts them. */
function relaxJson(text: string): string | undefined {
  let out = ''
  let changed = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') {
      const end = scanString(text, i, '"')
      if (end < 0) return undefined
      out += text.slice(i, end + 1)
      i = end
    } else if (c === "'") {
      const end = scanString(text, i, "'")
      if (end < 0) return undefined
      const inner = text
        .slice(i + 1, end)
        .replace(/\\'/g, "'")
        .replace(/"/g, '\\"')
      out += `"${inner}"`
      i = end
      changed = true
    } else {
      const m = /^(-?Infinity|NaN)/.exec(text.slice(i))
      if (m && !/[A-Za-z0-9_]/.test(text[i - 1] ?? '')) {
        out += JSON.stringify('\u0000num:' + m[1])
        i += m[1]!.length - 1
        changed = true
      } else {
        out += c
      }
    }
  }
  return changed ? out : undefined
}

function scanString(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === quote) return i
  }
  return -1
}

// ---------------------------------------------------------------------------------------------
// Conversions between types

const TICKS_0001_TO_1970 = -MIN_DATETIME_TICKS

const INT32_MIN = -2147483648
const INT32_MAX = 2147483647

function truncToLong(n: number): number | null {
  if (!Number.isFinite(n)) return null
  const t = Math.trunc(n)
  return t === 0 ? 0 : t
}

/** Parses Kusto number text (decimal, exponent, hex `0x..`; surrounding blanks allowed). */
export function parseNumberText(text: string): number | null {
  const s = text.trim()
  if (s === '') return null
  if (/^[+-]?0x[0-9a-f]+$/i.test(s)) {
    const neg = s.startsWith('-')
    const v = Number(BigInt(s.replace(/^[+-]/, '')))
    return neg ? -v : v
  }
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) return Number(s)
  if (/^[+-]?(nan)$/i.test(s)) return NaN
  if (/^\+?(inf|infinity)$/i.test(s)) return Infinity
  if (/^-(inf|infinity)$/i.test(s)) return -Infinity
  return null
}

function parseIntegerText(text: string): Long | null {
  // exact for every 64-bit integer text (decimal or 0x hex)
  const exact = longFromText(text)
  if (exact !== null) return exact
  // Kusto accepts a decimal text for an integer target and truncates it
  const n = parseNumberText(text)
  return n === null ? null : longFromDouble(n)
}

/** The 16 bytes of a guid in .NET's Guid.ToByteArray() order (first three groups little-endian). */
export function guidToBytes(guid: string): Buffer {
  const hex = guid.replace(/-/g, '')
  const b = Buffer.from(hex, 'hex')
  const swap = (from: number, len: number): void => {
    b.subarray(from, from + len).reverse()
  }
  swap(0, 4)
  swap(4, 2)
  swap(6, 2)
  return b
}

/** Parses guid text: the first 32 hex digits, hyphens allowed where a guid has them, braces/parentheses allowed. */
export function parseGuidText(text: string): string | null {
  const s = text.trim().replace(/^[{(]/, '')
  const m = /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})/i.exec(s)
  if (!m) return null
  return `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase()
}

function parseBoolText(text: string): boolean | null {
  const s = text.trim().toLowerCase()
  if (s === 'true') return true
  if (s === 'false') return false
  const n = parseNumberText(s)
  if (n !== null && Number.isInteger(n)) return n !== 0
  return null
}

/**
 * Converts a value of type `from` to type `to` the way Kusto's `to<type>()` functions do: null
 * when the conversion fails. Numbers truncate toward zero for integer targets; datetimes and
 * timespans convert to/from their tick counts (datetime ticks count from 0001-01-01, as in .NET);
 * strings are parsed; dynamic values convert by their runtime type.
 */
export function convertValue(to: KqlType, from: KqlType, value: KqlValue): KqlValue {
  if (value === null || value === undefined) return to === 'string' ? '' : null
  if (from === 'dynamic') return convertDynamic(to, value as DynamicValue)
  switch (to) {
    case 'string':
      return valueToString(from, value)
    case 'dynamic':
      return toDynamic(from, value)
    case 'bool':
      switch (from) {
        case 'bool':
          return value
        case 'int':
        case 'long':
        case 'real':
        case 'decimal':
          return Number.isNaN(value as number) ? null : (value as number) !== 0
        case 'string':
          return parseBoolText(value as string)
        default:
          return null
      }
    case 'int':
    case 'long': {
      let n: Long | null
      switch (from) {
        case 'bool':
          n = value ? 1 : 0
          break
        case 'int':
        case 'long':
          n = value as Long
          break
        case 'real':
        case 'decimal':
          n = longFromDouble(value as number)
          break
        case 'string':
          n = parseIntegerText(value as string)
          break
        case 'datetime':
          n = canonLong((value as bigint) + TICKS_0001_TO_1970)
          break
        case 'timespan':
          n = canonLong(value as bigint)
          break
        default:
          n = null
      }
      if (n === null) return null
      return to === 'int' ? wrapInt32(n) : n
    }
    case 'real':
    case 'decimal':
      switch (from) {
        case 'bool':
          return value ? 1 : 0
        case 'int':
        case 'long':
          return longToNumber(value as Long)
        case 'real':
        case 'decimal':
          return value
        case 'string':
          return parseNumberText(value as string)
        case 'datetime':
          return Number((value as bigint) + TICKS_0001_TO_1970)
        case 'timespan':
          return Number(value as bigint)
        default:
          return null
      }
    case 'datetime':
      switch (from) {
        case 'datetime':
          return value
        case 'string':
          return parseDateTime(value as string)
        case 'int':
        case 'long':
          return ticksToDateTime(longToBigInt(value as Long))
        default:
          return null
      }
    case 'timespan':
      switch (from) {
        case 'timespan':
          return value
        case 'string':
          return parseTimespan(value as string)
        case 'int':
        case 'long':
          return longToBigInt(value as Long)
        case 'real':
        case 'decimal':
          return Number.isFinite(value as number) ? BigInt(Math.trunc(value as number)) : null
        default:
          return null
      }
    case 'guid':
      return from === 'guid' ? value : from === 'string' ? parseGuidText(value as string) : null
  }
}

/** .NET ticks (since 0001-01-01) → the engine's datetime ticks, or null when out of range. */
function ticksToDateTime(netTicks: bigint): bigint | null {
  if (netTicks < 0n || netTicks > 3155378975999999999n) return null
  return netTicks - TICKS_0001_TO_1970
}

function wrapInt32(n: Long): number {
  if (n >= INT32_MIN && n <= INT32_MAX) return Number(n)
  return Number(BigInt.asIntN(32, longToBigInt(n)))
}

/** Converts a dynamic value to a typed value (null when its runtime type does not convert). */
export function convertDynamic(to: KqlType, value: DynamicValue): KqlValue {
  if (value === null || value === undefined) return to === 'string' ? '' : null
  if (to === 'dynamic') return value
  if (to === 'string') return dynamicToText(value)
  if (typeof value === 'string') return convertValue(to, 'string', value)
  if (typeof value === 'number') return convertValue(to, Number.isInteger(value) ? 'long' : 'real', value)
  if (typeof value === 'bigint') return convertValue(to, 'long', value)
  if (typeof value === 'boolean') return convertValue(to, 'bool', value)
  return null
}

/** A value of any numeric-ish type as a JS number, or null (strings and dynamic strings are parsed). */
export function toNumber(type: KqlType, value: KqlValue): number | null {
  if (value === null || value === undefined) return null
  switch (type) {
    case 'int':
    case 'long':
    case 'real':
    case 'decimal':
      // a long beyond 2^53 is a bigint: as a double it is Kusto's long → real conversion
      return typeof value === 'bigint' ? Number(value) : (value as number)
    case 'bool':
      return value ? 1 : 0
    case 'timespan':
    case 'datetime':
      return Number(value as bigint)
    case 'string':
      return parseNumberText(value as string)
    case 'dynamic':
      return typeof value === 'number'
        ? value
        : typeof value === 'bigint'
          ? Number(value)
          : typeof value === 'boolean'
            ? value
              ? 1
              : 0
            : typeof value === 'string'
              ? parseNumberText(value)
              : null
    default:
      return null
  }
}

/** A value as an integer (truncated), or null. */
export function toInteger(type: KqlType, value: KqlValue): number | null {
  const n = toNumber(type, value)
  return n === null ? null : truncToLong(n)
}

/** A value as a bool, or null. */
export function toBool(type: KqlType, value: KqlValue): boolean | null {
  const v = convertValue('bool', type, value)
  return typeof v === 'boolean' ? v : null
}

/** The runtime type name Kusto's gettype() reports for a dynamic value. */
export function dynamicTypeName(value: DynamicValue): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return 'real'
    return value >= INT32_MIN && value <= INT32_MAX ? 'int' : 'long'
  }
  if (typeof value === 'bigint') return 'long'
  return Array.isArray(value) ? 'array' : 'dictionary'
}

// ---------------------------------------------------------------------------------------------
// Ordering

/**
 * Orders two non-null values of one type (numbers numerically, strings ordinally, datetimes and
 * timespans by ticks, bools false < true). Dynamic values order numbers before strings.
 */
export function compareValues(type: KqlType, a: KqlValue, b: KqlValue): number {
  if (type === 'string' || type === 'guid') {
    const x = String(a),
      y = String(b)
    return x < y ? -1 : x > y ? 1 : 0
  }
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0
  // a long beyond 2^53 (bigint) against a number: exact by value; NaN sorts smallest
  if ((typeof a === 'bigint' && typeof b === 'number') || (typeof a === 'number' && typeof b === 'bigint')) {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? -1 : 1
    return a < b ? -1 : a > b ? 1 : 0
  }
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : -1) : 1
    return a < b ? -1 : a > b ? 1 : 0
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1
  const rank = (v: KqlValue): number =>
    typeof v === 'number' || typeof v === 'bigint' ? 0 : typeof v === 'boolean' ? 1 : typeof v === 'string' ? 2 : 3
  const ra = rank(a),
    rb = rank(b)
  if (ra !== rb) return ra - rb
  const x = typeof a === 'string' ? a : dynamicToJson(a as DynamicValue)
  const y = typeof b === 'string' ? b : dynamicToJson(b as DynamicValue)
  return x < y ? -1 : x > y ? 1 : 0
}

/** Code points of a string (strlen counts these). */
export function codePoints(s: string): string[] {
  return [...s]
}

// ---------------------------------------------------------------------------------------------
// Kusto `has`: whole-term, case-insensitive

function isTermChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}]/u.test(c)
}

/**
 * A regular expression equivalent to `has` / `has_cs` for a constant term: the term, not glued to
 * letters or digits on a side where the term itself starts or ends with one. Case-insensitive
 * terms use the `iu` flags (Unicode simple case folding: K and k, ſ and s are one letter; İ, ı
 * and ß match only themselves). Matching with the regex engine avoids lower-casing every row's text.
 */
export function hasTermRegex(term: string, caseSensitive: boolean): RegExp | undefined {
  if (term === '') return undefined
  const escaped = term.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const startsWithTermChar = isTermChar(String.fromCodePoint(term.codePointAt(0)!))
  const endsWithTermChar = isTermChar(String.fromCodePoint(term.codePointAt(term.length - 1)!))
  const source = `${startsWithTermChar ? '(?<![\\p{L}\\p{N}])' : ''}${escaped}${endsWithTermChar ? '(?![\\p{L}\\p{N}])' : ''}`
  try {
    return new RegExp(source, caseSensitive ? 'u' : 'iu')
  } catch {
    return undefined
  }
}

const TERM_REGEXES = new Map<string, RegExp | undefined>()

/**
 * Kusto's `has`: `term` occurs in `text` case-insensitively and is not glued to letters or digits
 * on a side where the term itself starts or ends with one. An empty term always matches. One rule
 * for every path (`has` with a constant or a computed term, has_any, has_all, has_any_index and
 * SQLite's kql_match): the `iu` regex of hasTermRegex (issue 17: has_any lowered the text, so
 * 'İ' had the term 'i' there and not under `has`).
 */
export function hasTerm(text: string, term: string): boolean {
  if (term === '') return true
  let re = TERM_REGEXES.get(term)
  if (re === undefined && !TERM_REGEXES.has(term)) {
    if (TERM_REGEXES.size > 1000) TERM_REGEXES.clear()
    re = hasTermRegex(term, false)
    TERM_REGEXES.set(term, re)
  }
  if (re) return re.test(text)
  const hay = text.toLowerCase()
  const needle = term.toLowerCase()
  const checkStart = isTermChar(needle[0])
  const checkEnd = isTermChar(needle[needle.length - 1])
  let from = 0
  for (;;) {
    const at = hay.indexOf(needle, from)
    if (at < 0) return false
    const okStart = !checkStart || !isTermChar(hay[at - 1])
    const okEnd = !checkEnd || !isTermChar(hay[at + needle.length])
    if (okStart && okEnd) return true
    from = at + 1
  }
}
