/**
 * @module
 * The parameter kinds: THE table every scalar and aggregate function's arity and type errors come
 * from (issue 19 item 6), with the type lists the families share. A leaf: function-definitions.ts
 * checks arguments against it, numeric-helpers.ts converts values to a kind.
 */
import type { KqlType } from '../types.js'

export const ALL_TYPES: readonly KqlType[] = ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid', 'dynamic']
/** Kusto's "scalar" parameter kind: any type (values are converted as the function documents). */
export const SCALAR_TYPES = ALL_TYPES
export const INTEGER_TYPES: readonly KqlType[] = ['int', 'long']
export const NUMERIC_TYPES: readonly KqlType[] = ['int', 'long', 'real', 'decimal']
/** Types whose values order (min_of, max_of, comparisons). */
export const ORDERABLE_TYPES: readonly KqlType[] = ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid']

/**
 * Parameter kinds: THE table every scalar and aggregate function's arity and type errors come
 * from (issue 19 item 6). `dynamic` values are accepted wherever a scalar is expected and
 * converted at run time (Kusto does the same for values taken out of a property bag); numeric
 * kinds widen (int → long → real). Under `impl` (see ScalarSpec) a kind also says how a value
 * is converted: `integer` → a JS number (a long beyond 2^53 rounded: counts, indexes, sizes),
 * `long` → the exact long (long.ts), `number`/`real` → a JS number, `scalar` → as it is.
 */
export type ParamKind =
  | 'scalar'
  | 'string'
  | 'integer'
  | 'long'
  | 'number'
  | 'real'
  | 'bool'
  | 'dynamic'
  | 'datetime'
  | 'timespan'
  | 'guid'
  | 'notDynamic'
  /** an aggregate's `…if` predicate: a bool (the error names it "predicate") */
  | 'predicate'
  /** what sum() adds: a number or a timespan */
  | 'numberOrTimespan'
  /** what avg(), percentile() and tdigest() order or average: a number, datetime or timespan */
  | 'numberOrTime'
  /** what min(), max() and arg_max() order: any type but dynamic */
  | 'orderable'

const NUMBER_TYPES: readonly KqlType[] = ['int', 'long', 'real', 'decimal', 'dynamic']
const INTEGRAL_TYPES: readonly KqlType[] = ['int', 'long', 'dynamic']

export const KINDS: Readonly<Record<ParamKind, { readonly types: readonly KqlType[]; readonly label: string }>> = {
  scalar: { types: ALL_TYPES, label: 'a scalar' },
  string: { types: ['string', 'dynamic'], label: 'a string' },
  integer: { types: INTEGRAL_TYPES, label: 'an integer (int or long)' },
  long: { types: INTEGRAL_TYPES, label: 'an integer (int or long)' },
  number: { types: NUMBER_TYPES, label: 'a number' },
  real: { types: NUMBER_TYPES, label: 'a number' },
  bool: { types: ['bool', 'dynamic'], label: 'a bool' },
  dynamic: { types: ['dynamic'], label: 'dynamic' },
  datetime: { types: ['datetime', 'dynamic'], label: 'a datetime' },
  timespan: { types: ['timespan', 'dynamic'], label: 'a timespan' },
  guid: { types: ['guid', 'string', 'dynamic'], label: 'a guid' },
  notDynamic: {
    types: ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid'],
    label: 'a non-dynamic scalar',
  },
  predicate: { types: ['bool', 'dynamic'], label: 'a bool' },
  numberOrTimespan: { types: [...NUMBER_TYPES, 'timespan'], label: 'a number or timespan' },
  numberOrTime: { types: [...NUMBER_TYPES, 'datetime', 'timespan'], label: 'a number or datetime or timespan' },
  orderable: { types: ORDERABLE_TYPES, label: 'a scalar of an orderable type' },
}
/** The kind of argument `i`: past the end of `kinds`, the last `repeat` kinds repeat as a group. */
export function kindAt(kinds: readonly ParamKind[], i: number, repeat = 1): ParamKind {
  if (i < kinds.length) return kinds[i]!
  return kinds[kinds.length - repeat + ((i - kinds.length) % repeat)]!
}
