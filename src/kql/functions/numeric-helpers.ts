/**
 * @module
 * Helpers shared by the "data" families (datetime, math, dynamic, series, aggregates): declarative
 * signatures with Kusto's implicit widening, run-time conversion of dynamic arguments, and the
 * ordering and equality of values that sorting, sets and min/max need.
 */
import { dynamicJsonText } from '../dynamic-json.js'
import { canonLong, longFromDouble } from '../long.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { formatDateTime, formatTimespan, parseDateTime, parseTimespan } from '../values.js'
import { checkArity, functionError } from './function-definitions.js'
import type { ArgInfo, BoundScalar, EvalContext, ScalarFunction } from './function-types.js'

/**
 * What a parameter accepts. Numeric kinds widen (int → long → real); `dynamic` arguments are
 * accepted where Kusto converts them at run time (a number inside dynamic for a numeric parameter).
 */
export type ParamKind =
  | 'number' // int, long, real, decimal → JS number
  | 'integer' // int, long → JS number (a long beyond 2^53 rounded: counts, indexes, sizes)
  | 'long' // int, long → the exact long (long.ts: number or bigint)
  | 'real' // int, long, real, decimal → JS number (alias of number, documents intent)
  | 'datetime'
  | 'timespan'
  | 'string'
  | 'bool'
  | 'dynamic'
  | 'scalar' // any type, passed through

const ACCEPTS: Readonly<Record<ParamKind, readonly KqlType[]>> = {
  number: ['int', 'long', 'real', 'decimal', 'dynamic'],
  integer: ['int', 'long', 'dynamic'],
  long: ['int', 'long', 'dynamic'],
  real: ['int', 'long', 'real', 'decimal', 'dynamic'],
  datetime: ['datetime', 'dynamic'],
  timespan: ['timespan', 'dynamic'],
  string: ['string', 'dynamic'],
  bool: ['bool', 'dynamic'],
  dynamic: ['dynamic'],
  scalar: ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid', 'dynamic'],
}

export const NUMERIC_TYPES: readonly KqlType[] = ['int', 'long', 'real', 'decimal']

/** Throws the family's usual "argument #i must be ..." error unless the argument fits `kind`. */
export function checkKind(name: string, args: readonly ArgInfo[], index: number, kind: ParamKind): void {
  const arg = args[index]
  if (!arg) return
  if (!ACCEPTS[kind].includes(arg.type)) {
    const wanted = kind === 'number' || kind === 'real' ? 'a number' : kind === 'integer' || kind === 'long' ? 'an int or long' : kind
    throw functionError(name, `argument #${index + 1} (${arg.text}) must be ${wanted}, got ${arg.type}`)
  }
}

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

export interface Signature {
  /** Parameter kinds in order; `optional` of them (from the end) may be omitted; `rest` repeats the last. */
  readonly params: readonly ParamKind[]
  readonly optional?: number
  readonly rest?: boolean
  /** Result type, fixed or computed from the argument infos. */
  readonly result: KqlType | ((args: readonly ArgInfo[]) => KqlType)
  /**
   * When true (the default) any null argument gives a null result without calling `impl`.
   * Strings are never null, so string parameters never trigger this.
   */
  readonly nullInNullOut?: boolean
  /** Called per row with coerced arguments. `args` are the call site's infos (for constants). */
  readonly impl: (values: readonly KqlValue[], ctx: EvalContext, args: readonly ArgInfo[]) => KqlValue
  /** Optional bind-time hook: validate constants, precompute; may return a specialised impl. */
  readonly prepare?: (args: readonly ArgInfo[]) => Signature['impl'] | undefined
}

/** Defines a scalar function from a declarative signature. */
export function defineScalar(
  name: string,
  sig: Signature,
  more: { aliases?: readonly string[]; deterministic?: boolean } = {},
): ScalarFunction {
  const min = sig.params.length - (sig.optional ?? 0)
  const max = sig.rest ? Infinity : sig.params.length
  const fn: ScalarFunction = {
    name,
    ...(more.aliases ? { aliases: more.aliases } : {}),
    ...(more.deterministic === false ? { deterministic: false } : {}),
    bind(args: readonly ArgInfo[]): BoundScalar {
      checkArity(name, args, min, max)
      const kinds = args.map((_, i) => sig.params[Math.min(i, sig.params.length - 1)]!)
      kinds.forEach((k, i) => {
        checkKind(name, args, i, k)
      })
      const coerce = args.map((a, i) => coercer(kinds[i]!, a.type))
      const impl = sig.prepare?.(args) ?? sig.impl
      const type = typeof sig.result === 'function' ? sig.result(args) : sig.result
      const nullOut = sig.nullInNullOut !== false
      const nullable = kinds.map((k) => k !== 'string' && k !== 'scalar' && k !== 'dynamic')
      return {
        type,
        evaluate(values, ctx) {
          const vs: KqlValue[] = new Array(values.length)
          for (let i = 0; i < values.length; i++) {
            const v = coerce[i]!(values[i] ?? null)
            if (nullOut && nullable[i] && v === null) return type === 'string' ? '' : null
            vs[i] = v
          }
          return impl(vs, ctx, args)
        },
      }
    },
  }
  return fn
}

/** The constant value of an argument, if the binder knows it. */
export function constantOf(arg: ArgInfo | undefined): KqlValue | undefined {
  return arg?.constant ? arg.constant.value : undefined
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
