/**
 * @module
 * Helpers shared by the "data" families (datetime, math, dynamic, series, aggregates): run-time
 * conversion of arguments to their parameter kinds (`coercer`, used by `defineScalar`'s `impl`
 * specs), Kusto's implicit numeric widening, and the ordering and equality of values that
 * sorting, sets and min/max need.
 */
import { dynamicJsonText } from '../dynamic-json.js'
import { canonLong, longFromDouble } from '../long.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { formatDateTime, formatTimespan, parseDateTime, parseTimespan } from '../values.js'
import type { ParamKind } from './param-kinds.js'

/** A converter from an argument's runtime value (of its static type) to the value a parameter kind expects. */
export type Coerce = (v: KqlValue) => KqlValue

/** Builds the converter for one argument at bind time (identity unless the argument is dynamic). */
export function coercer(kind: ParamKind, from: KqlType): Coerce {
  if (from === 'long' && kind !== 'long' && kind !== 'scalar' && kind !== 'dynamic') {
    // a long beyond 2^53 is a bigint; parameters that compute in doubles get Kusto's long → real
    return (v) => (v === undefined ? null : typeof v === 'bigint' ? Number(v) : v)
  }
  if (from !== 'dynamic') return (v) => (v === undefined ? null : v)
  switch (kind) {
    case 'long':
      return (v) => {
        if (typeof v === 'bigint') return v
        const n = dynToNumber(v as DynamicValue)
        return n === null ? null : longFromDouble(n)
      }
    case 'number':
    case 'real':
      return (v) => dynToNumber(v as DynamicValue)
    case 'integer':
      return (v) => {
        const n = dynToNumber(v as DynamicValue)
        return n === null ? null : Math.trunc(n)
      }
    case 'datetime':
      return (v) => (typeof v === 'string' ? parseDateTime(v) : null)
    case 'timespan':
      return (v) =>
        typeof v === 'string' ? parseTimespan(v) : typeof v === 'number' ? BigInt(Math.trunc(v)) : typeof v === 'bigint' ? v : null
    case 'string':
      return (v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : jsonOf(v as DynamicValue))
    case 'bool':
      return (v) => (typeof v === 'boolean' ? v : typeof v === 'number' ? v !== 0 : typeof v === 'string' ? parseBool(v) : null)
    default:
      return (v) => (v === undefined ? null : v)
  }
}

function parseBool(s: string): boolean | null {
  const t = s.trim().toLowerCase()
  return t === 'true' ? true : t === 'false' ? false : null
}

/** A number held in a dynamic value (numbers, numeric strings are not numbers in Kusto's dynamic), else null. */
export function dynToNumber(v: DynamicValue | undefined): number | null {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  if (typeof v === 'boolean') return v ? 1 : 0
  return null
}

/** JSON text of a dynamic value for keys and orders (non-finite numbers as their names, exact longs). */
function jsonOf(v: DynamicValue): string {
  return dynamicJsonText(v, String)
}

/** The static type of a numeric result over arguments of the given types (int < long < real/decimal). */
export function widest(types: readonly KqlType[]): KqlType {
  let out: KqlType = 'int'
  for (const t of types) {
    if (t === 'real' || t === 'dynamic') return 'real'
    if (t === 'decimal') out = out === 'real' ? 'real' : 'decimal'
    else if (t === 'long' && out === 'int') out = 'long'
  }
  return out
}

/** Converts a typed value into dynamic (datetimes and timespans become text, as Kusto serialises them). */
export function asDynamic(type: KqlType, value: KqlValue): DynamicValue {
  if (value === null || value === undefined) return null
  if (type === 'datetime' && typeof value === 'bigint') return formatDateTime(value)
  if (type === 'timespan' && typeof value === 'bigint') return formatTimespan(value)
  // a long beyond 2^53 stays a canonical bigint (README "The value of a long"); no other type is a bigint here
  if (typeof value === 'bigint') return type === 'long' || type === 'dynamic' ? canonLong(value) : Number(value)
  return value as DynamicValue
}

/** Reads a value of a static type out of dynamic (the inverse of asDynamic), null when it does not fit. */
export function fromDynamic(type: KqlType, v: DynamicValue | undefined): KqlValue {
  if (v === null || v === undefined) return type === 'string' ? '' : null
  switch (type) {
    case 'datetime':
      return typeof v === 'string' ? parseDateTime(v) : null
    case 'timespan':
      return typeof v === 'string' ? parseTimespan(v) : null
    case 'int':
      return typeof v === 'number' ? Math.trunc(v) : typeof v === 'bigint' ? Number(BigInt.asIntN(32, v)) : null
    case 'long':
      return typeof v === 'number' ? longFromDouble(v) : typeof v === 'bigint' ? v : null
    case 'real':
    case 'decimal':
      return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null
    case 'bool':
      return typeof v === 'boolean' ? v : null
    case 'string':
    case 'guid':
      return typeof v === 'string' ? v : jsonOf(v)
    case 'dynamic':
      return v
  }
}

/** A dynamic array, or null when the value is not an array. */
export function asArray(v: KqlValue | undefined): DynamicValue[] | null {
  return Array.isArray(v) ? (v as DynamicValue[]) : null
}

/** A dynamic property bag (a JSON object that is not an array), or null. */
export function asBag(v: KqlValue | undefined): { [key: string]: DynamicValue } | null {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v) ? (v as { [key: string]: DynamicValue }) : null
}

/** Rank of a dynamic value's kind when values of different kinds are ordered (nulls handled by callers). */
function kindRank(v: DynamicValue): number {
  if (typeof v === 'boolean') return 0
  if (typeof v === 'number' || typeof v === 'bigint') return 1
  if (typeof v === 'string') return 2
  if (Array.isArray(v)) return 3
  return 4
}

/**
 * Total order of non-null dynamic values used by array_sort_* and make_set: numbers numerically,
 * strings ordinally, booleans false < true; different kinds by kind.
 */
export function compareDynamic(a: DynamicValue, b: DynamicValue): number {
  const ka = kindRank(a)
  const kb = kindRank(b)
  if (ka !== kb) return ka - kb
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    // a long beyond 2^53 (bigint) compares exactly with numbers
    if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1
    if (Number.isNaN(b)) return -1
    return a < b ? -1 : a > b ? 1 : 0
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  const ja = jsonOf(a)
  const jb = jsonOf(b)
  return ja < jb ? -1 : ja > jb ? 1 : 0
}

/** Order of two non-null scalar values of the same static type (numbers, bigints, strings, bools). */
export function compareScalar(a: KqlValue, b: KqlValue): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0
  // longs in canonical form (long.ts): a bigint against a number compares exactly; NaN is smallest
  if ((typeof a === 'bigint' && typeof b === 'number') || (typeof a === 'number' && typeof b === 'bigint')) {
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? -1 : 1
    return a < b ? -1 : a > b ? 1 : 0
  }
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1
    if (Number.isNaN(b)) return 1
    return a < b ? -1 : a > b ? 1 : 0
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  return compareDynamic(a as DynamicValue, b as DynamicValue)
}

/** A canonical key for equality of dynamic values (sets, distinct counts): type-tagged JSON. */
export function dynamicKey(v: DynamicValue | undefined): string {
  if (v === undefined || v === null) return 'null'
  // canonical longs: a bigint is never a safe integer, so `n:` keys cannot collide across forms
  if (typeof v === 'number' || typeof v === 'bigint') return Number.isNaN(v) ? 'n:NaN' : `n:${v}`
  if (typeof v === 'string') return `s:${v}`
  if (typeof v === 'boolean') return `b:${v}`
  return `j:${jsonOf(v)}`
}

/** A canonical key for equality of a typed scalar value. */
export function scalarKey(v: KqlValue): string {
  if (typeof v === 'bigint') return `t:${v}`
  return dynamicKey(v as DynamicValue)
}
