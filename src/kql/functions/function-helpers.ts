/**
 * @module
 * Helpers shared by the function families (owned by the "text" part; the other families only
 * read it): arity and type checks, errors that name the function, Kusto's text form of every
 * value (`tostring`), conversions between KQL types (`tolong`, `todouble`, ...; also what
 * `extract(..., typeof(T))` and `parse ... with x:T` need), Kusto's `has` term match and value
 * ordering.
 *
 * Conventions for callers (kql-core):
 * - A `typeof(T)` argument is passed as `{ type: 'string', constant: { value: 'T' }, text: 'typeof(T)' }`
 *   (T any spelling `parseTypeName` accepts); `typeLiteralArg` reads it.
 * - Regex arguments go through `compileRegex` in ./regex.ts (RE2, linear time), which throws a
 *   KqlError('semantic') naming the function for an invalid pattern.
 */
import { dynamicJsonText, parseDynamicJson } from '../dynamic-json.js'
import { KqlError } from '../kql-error.js'
import { canonLong, type Long, longFromDouble, longFromText, longToBigInt, longToNumber } from '../long.js'
import { type DynamicValue, type KqlType, type KqlValue, parseTypeName } from '../types.js'
import { dateTimeParts, formatDateTime, formatTimespan, MIN_DATETIME_TICKS, parseDateTime, parseTimespan } from '../values.js'
import type { ArgInfo, EvalContext, ScalarFunction } from './function-types.js'

// ---------------------------------------------------------------------------------------------
// Errors, arity, argument types

/** A semantic error that names the function, e.g. "strlen(): expects 1 argument, got 2". */
export function functionError(name: string, detail: string): KqlError {
  return new KqlError('semantic', `${name}(): ${detail}`)
}

/** Throws unless `min <= args.length <= max`. */
export function checkArity(name: string, args: readonly ArgInfo[], min: number, max: number = min): void {
  if (args.length >= min && args.length <= max) return
  const expected = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`
  throw functionError(name, `expects ${expected} argument${expected === '1' ? '' : 's'}, got ${args.length}`)
}

/** Throws unless the argument's type is one of `allowed`. */
export function checkType(name: string, args: readonly ArgInfo[], index: number, allowed: readonly KqlType[]): void {
  const arg = args[index]
  if (arg && !allowed.includes(arg.type)) {
    throw functionError(name, `argument #${index + 1} (${arg.text}) must be ${allowed.join(' or ')}, got ${arg.type}`)
  }
}

export const ALL_TYPES: readonly KqlType[] = ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid', 'dynamic']
/** Kusto's "scalar" parameter kind: any type (values are converted as the function documents). */
export const SCALAR_TYPES = ALL_TYPES
export const INTEGER_TYPES: readonly KqlType[] = ['int', 'long']
export const NUMERIC_TYPES: readonly KqlType[] = ['int', 'long', 'real', 'decimal']
/** Types whose values order (min_of, max_of, comparisons). */
export const ORDERABLE_TYPES: readonly KqlType[] = ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid']

/**
 * Parameter kinds the families check. `dynamic` values are accepted wherever a scalar is expected
 * and converted at run time (Kusto does the same for values taken out of a property bag).
 */
export type ParamKind = 'scalar' | 'string' | 'integer' | 'number' | 'bool' | 'dynamic' | 'datetime' | 'timespan' | 'guid' | 'notDynamic'

const KIND_TYPES: Readonly<Record<ParamKind, readonly KqlType[]>> = {
  scalar: ALL_TYPES,
  string: ['string', 'dynamic'],
  integer: ['int', 'long', 'dynamic'],
  number: ['int', 'long', 'real', 'decimal', 'dynamic'],
  bool: ['bool', 'dynamic'],
  dynamic: ['dynamic'],
  datetime: ['datetime', 'dynamic'],
  timespan: ['timespan', 'dynamic'],
  guid: ['guid', 'string', 'dynamic'],
  notDynamic: ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid'],
}

const KIND_LABEL: Readonly<Record<ParamKind, string>> = {
  scalar: 'a scalar',
  string: 'a string',
  integer: 'an integer (int or long)',
  number: 'a number',
  bool: 'a bool',
  dynamic: 'dynamic',
  datetime: 'a datetime',
  timespan: 'a timespan',
  guid: 'a guid',
  notDynamic: 'a non-dynamic scalar',
}

/** Throws unless argument `index` (when present) fits `kind`. */
export function expectKind(name: string, args: readonly ArgInfo[], index: number, kind: ParamKind): void {
  const arg = args[index]
  if (arg && !KIND_TYPES[kind].includes(arg.type)) {
    throw functionError(name, `argument #${index + 1} (${arg.text}) must be ${KIND_LABEL[kind]}, got ${arg.type}`)
  }
}

/** Checks arity and every argument against `kinds` (the last kind repeats for variadic tails). */
export function expectArgs(
  name: string,
  args: readonly ArgInfo[],
  kinds: readonly ParamKind[],
  min: number = kinds.length,
  max: number = kinds.length,
): void {
  checkArity(name, args, min, max)
  for (let i = 0; i < args.length; i++) expectKind(name, args, i, kinds[Math.min(i, kinds.length - 1)]!)
}

/** A constant argument's value, or undefined when the argument is not constant. */
export function constantOf(arg: ArgInfo | undefined): KqlValue | undefined {
  return arg?.constant === undefined ? undefined : arg.constant.value
}

/** The text of a constant string argument, or throws naming the function. */
export function constantString(name: string, args: readonly ArgInfo[], index: number, what: string): string {
  const arg = args[index]
  const value = constantOf(arg)
  if (arg === undefined || value === undefined) throw functionError(name, `${what} (argument #${index + 1}) must be a constant`)
  return valueToString(arg.type, value)
}

/** Reads a `typeof(T)` argument (see the module comment), or throws naming the function. */
export function typeLiteralArg(name: string, arg: ArgInfo | undefined): KqlType {
  const value = constantOf(arg)
  // the constant carries the type name; the source text `typeof(T)` works as a fallback
  const source = typeof value === 'string' ? value : /^\s*typeof\s*\(/i.test(arg?.text ?? '') ? arg!.text : undefined
  const text = source?.replace(/^\s*typeof\s*\(\s*|\s*\)\s*$/gi, '')
  const type = text === undefined ? undefined : parseTypeName(text)
  if (type === undefined) throw functionError(name, `expects a type literal such as typeof(long), got ${arg?.text ?? 'nothing'}`)
  return type
}

export function isNull(value: KqlValue): boolean {
  return value === null || value === undefined
}

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

// ---------------------------------------------------------------------------------------------
// Kusto `has`: whole-term, case-insensitive

function isTermChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}]/u.test(c)
}

/**
 * Kusto's `has`: `term` occurs in `text` case-insensitively and is not glued to letters or digits
 * on a side where the term itself starts or ends with one. An empty term always matches.
 */
export function hasTerm(text: string, term: string): boolean {
  if (term === '') return true
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

// ---------------------------------------------------------------------------------------------
// Defining simple scalar functions

/** What `defineScalar` needs: parameter kinds (the last one repeats up to `max`), result type, implementation. */
export interface ScalarSpec {
  readonly name: string
  readonly aliases?: readonly string[]
  readonly params: readonly ParamKind[]
  /** Minimum argument count; defaults to params.length. */
  readonly min?: number
  /** Maximum argument count; defaults to params.length (Infinity for open-ended lists). */
  readonly max?: number
  readonly result: KqlType | ((args: readonly ArgInfo[]) => KqlType)
  readonly deterministic?: boolean
  /** Extra bind-time checks and precomputation; returns the per-row implementation. */
  readonly bind: (args: readonly ArgInfo[]) => (values: readonly KqlValue[], ctx: EvalContext) => KqlValue
}

/** Builds a ScalarFunction from a spec: arity and kinds are checked before `spec.bind` runs. */
export function defineScalar(spec: ScalarSpec): ScalarFunction {
  const fn: ScalarFunction = {
    name: spec.name,
    ...(spec.aliases ? { aliases: spec.aliases } : {}),
    ...(spec.deterministic === false ? { deterministic: false } : {}),
    bind: (args) => {
      expectArgs(spec.name, args, spec.params, spec.min ?? spec.params.length, spec.max ?? spec.params.length)
      const type = typeof spec.result === 'function' ? spec.result(args) : spec.result
      return { type, evaluate: spec.bind(args) }
    },
  }
  return fn
}

/** Reads argument `i` of a row as text (tostring semantics; a missing argument reads as ""). */
export function textReader(args: readonly ArgInfo[], i: number): (values: readonly KqlValue[]) => string {
  const type = args[i]?.type ?? 'string'
  if (type === 'string') return (values) => (values[i] as string | null | undefined) ?? ''
  return (values) => valueToString(type, values[i] ?? null)
}

/** Reads argument `i` of a row as an integer (truncated), or null; `fallback` when the argument is absent. */
export function integerReader(
  args: readonly ArgInfo[],
  i: number,
  fallback: number | null = null,
): (values: readonly KqlValue[]) => number | null {
  const arg = args[i]
  if (arg === undefined) return () => fallback
  return (values) => toInteger(arg.type, values[i] ?? null)
}

/** Reads argument `i` of a row as a number, or null. */
export function numberReader(
  args: readonly ArgInfo[],
  i: number,
  fallback: number | null = null,
): (values: readonly KqlValue[]) => number | null {
  const arg = args[i]
  if (arg === undefined) return () => fallback
  return (values) => toNumber(arg.type, values[i] ?? null)
}

/** Reads argument `i` of a row as a bool, or null. */
export function boolReader(
  args: readonly ArgInfo[],
  i: number,
  fallback: boolean | null = null,
): (values: readonly KqlValue[]) => boolean | null {
  const arg = args[i]
  if (arg === undefined) return () => fallback
  return (values) => toBool(arg.type, values[i] ?? null)
}

/** Reads argument `i` of a row as a dynamic value. */
export function dynamicReader(args: readonly ArgInfo[], i: number): (values: readonly KqlValue[]) => DynamicValue {
  const type = args[i]?.type ?? 'dynamic'
  return (values) => (type === 'dynamic' ? ((values[i] ?? null) as DynamicValue) : toDynamic(type, values[i] ?? null))
}

/**
 * Kusto's "common type" of several arguments (iff, case, coalesce, max_of, ...): all the same
 * type, or numbers widened int → long → decimal → real. Throws naming the function otherwise.
 * With `allowDynamic`, a dynamic argument makes the result dynamic.
 */
export function commonType(name: string, args: readonly ArgInfo[], indices: readonly number[], allowDynamic = true): KqlType {
  const types = indices.map((i) => args[i]!.type)
  if (types.length === 0) throw functionError(name, 'expects at least one value argument')
  if (allowDynamic && types.includes('dynamic')) return 'dynamic'
  const first = types[0]!
  if (types.every((t) => t === first)) return first
  if (types.every((t) => NUMERIC_TYPES.includes(t))) {
    return types.includes('real') ? 'real' : types.includes('decimal') ? 'decimal' : types.includes('long') ? 'long' : 'int'
  }
  const list = indices.map((i) => `${args[i]!.text} (${args[i]!.type})`).join(', ')
  throw functionError(name, `arguments must have the same type, got ${list}`)
}

/** Converts a value from an argument's type to the common type chosen by `commonType`. */
export function toCommon(target: KqlType, from: KqlType, value: KqlValue): KqlValue {
  if (value === null || value === undefined) return target === 'string' ? '' : null
  if (target === from) return value
  if (target === 'dynamic') return toDynamic(from, value)
  return value
}

// ---------------------------------------------------------------------------------------------
// Default column names of function calls

/**
 * How Kusto names the column of an unnamed call (`T | extend tostring(Name)` → `Name`), taken
 * from Kusto.Language's function table: `firstArgument` → the first argument's own result name
 * (a column name, recursively through such calls); `nameAndFirstArgument` → `<function>_<first>`;
 * `prefixAndFirstArgument` → `<prefix>_<first>`; `onlyArgument` → the argument's name when there
 * is exactly one; `prefixOnly` → `<prefix>`. Functions not listed give no name (the operator's
 * own default such as `Column1` / `print_0` applies). The binder (kql-core) applies these.
 */
export type ResultNameRule =
  | { readonly kind: 'firstArgument' }
  | { readonly kind: 'nameAndFirstArgument' }
  | { readonly kind: 'onlyArgument' }
  | { readonly kind: 'prefixAndFirstArgument'; readonly prefix: string }
  | { readonly kind: 'prefixOnly'; readonly prefix: string }

const FIRST: ResultNameRule = { kind: 'firstArgument' }
const NAME_FIRST: ResultNameRule = { kind: 'nameAndFirstArgument' }
const ONLY: ResultNameRule = { kind: 'onlyArgument' }

export const FUNCTION_RESULT_NAMES: Readonly<Record<string, ResultNameRule>> = {
  tostring: FIRST,
  tohex: FIRST,
  todynamic: FIRST,
  toobject: FIRST,
  tolong: FIRST,
  toint: FIRST,
  toreal: FIRST,
  todouble: FIRST,
  todatetime: FIRST,
  totimespan: FIRST,
  totime: FIRST,
  tobool: FIRST,
  toboolean: FIRST,
  todecimal: FIRST,
  toguid: FIRST,
  split: FIRST,
  parse_csv: FIRST,
  parse_json: FIRST,
  parsejson: FIRST,
  parse_xml: FIRST,
  format_datetime: FIRST,
  format_timespan: FIRST,
  format_bytes: FIRST,
  startofday: FIRST,
  bin: FIRST,
  floor: FIRST,
  bin_at: FIRST,
  bin_auto: FIRST,
  binary_and: FIRST,
  binary_or: FIRST,
  binary_xor: FIRST,
  binary_not: FIRST,
  binary_shift_left: FIRST,
  binary_shift_right: FIRST,
  bitset_count_ones: FIRST,
  series_fir: FIRST,
  series_iir: FIRST,
  series_outliers: FIRST,
  series_fill_backward: FIRST,
  series_fill_forward: FIRST,
  series_fill_const: FIRST,
  series_fill_linear: FIRST,
  round: FIRST,
  ceiling: FIRST,
  pow: FIRST,
  sqrt: FIRST,
  log: FIRST,
  log2: FIRST,
  log10: FIRST,
  exp: FIRST,
  exp2: FIRST,
  exp10: FIRST,
  cos: FIRST,
  sin: FIRST,
  tan: FIRST,
  acos: FIRST,
  asin: FIRST,
  atan: FIRST,
  atan2: FIRST,
  abs: FIRST,
  rand: FIRST,
  gamma: FIRST,
  loggamma: FIRST,
  strlen: NAME_FIRST,
  string_size: NAME_FIRST,
  dcount_hll: NAME_FIRST,
  percentile_tdigest: NAME_FIRST,
  make_datetime: ONLY,
  make_timespan: ONLY,
  gettype: { kind: 'prefixAndFirstArgument', prefix: 'type' },
  treepath: { kind: 'prefixAndFirstArgument', prefix: 'tree' },
  repeat: { kind: 'prefixAndFirstArgument', prefix: 'repeat' },
  percentiles_array_tdigest: { kind: 'prefixAndFirstArgument', prefix: 'percentile_tdigest' },
  tdigest_merge: { kind: 'prefixOnly', prefix: 'tdigests_merge_result' },
  merge_tdigest: { kind: 'prefixOnly', prefix: 'tdigests_merge_result' },
  hll_merge: { kind: 'prefixOnly', prefix: 'hll_merged_result' },
  ingestion_time: { kind: 'prefixOnly', prefix: '$IngestionTime' },
}
