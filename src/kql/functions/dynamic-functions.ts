/**
 * @module
 * KQL dynamic (array and property-bag) functions (see ./README.md): array shape and search,
 * reordering and sorting, sets, property bags (with JSONPath keys), packing, zip, range, repeat,
 * treepath and canonical JSON.
 *
 * Arrays and bags are JSON-like values (`DynamicValue`); inputs are never mutated. Typed scalar
 * arguments are converted into dynamic as Kusto serialises them (datetimes as ISO text).
 */
import { canonLong, isLongValue, longToBigInt } from '../long.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { parseDateTime, parseTimespan, TICKS_PER_HOUR } from '../values.js'
import { inferName } from './aggregate-definitions.js'
import { bagHasKey, bagMerge, bagPack, bagPackColumns, bagRemoveKeys, bagSetKey, bagZip, packAll, toDyn } from './bag-functions.js'
import { defineScalar, expectKind, functionError } from './function-definitions.js'
import type { ArgInfo, BoundScalar, ScalarFunction } from './function-types.js'
import { asArray, asBag, asDynamic, coercer, compareDynamic, dynamicKey } from './numeric-helpers.js'
import { sketchFunctions } from './sketch-aggregates.js'
import { formatReal, valueToString } from './value-conversions.js'

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

/** Distinct values in order of first appearance. */
function distinct(values: Iterable<DynamicValue>): DynamicValue[] {
  const seen = new Set<string>()
  const out: DynamicValue[] = []
  for (const v of values) {
    const k = dynamicKey(v)
    if (seen.has(k)) continue
    seen.add(k)
    out.push(v)
  }
  return out
}

/** Canonical JSON: bag keys sorted ordinally, reals as Kusto prints them. */
export function canonicalJson(v: DynamicValue): string {
  if (v === null) return 'null'
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : JSON.stringify(formatReal(v))
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v)
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  const keys = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k]!)}`).join(',')}}`
}

// ---------------------------------------------------------------------------------------------
// Arrays
// ---------------------------------------------------------------------------------------------

/** Resolves Kusto's negative indexes (from the end) and clamps to [0, length]. */
function resolveIndex(i: number, length: number): number {
  return i < 0 ? Math.max(0, length + i) : Math.min(i, length)
}

function arraySlice(arr: DynamicValue[], start: number, end: number): DynamicValue[] {
  const n = arr.length
  const s = start < 0 ? n + start : start
  const e = end < 0 ? n + end : end
  const from = Math.max(0, s)
  const to = Math.min(n - 1, e)
  return from > to ? [] : arr.slice(from, to + 1)
}

function arrayIndexOf(arr: DynamicValue[], value: DynamicValue, start: number, length: number, occurrence: number): number | null {
  if (occurrence < 0 || length < -1) return null
  const n = arr.length
  const from = start < 0 ? Math.max(0, n + start) : start
  if (from >= n) return -1
  const to = length === -1 ? n : Math.min(n, from + length)
  const key = dynamicKey(value)
  let seen = 0
  for (let i = from; i < to; i++) {
    if (dynamicKey(arr[i]) === key && ++seen >= Math.max(occurrence, 1)) return i
  }
  return -1
}

/** The value Kusto fills shifted-in slots with: "" for arrays of strings, else null. */
function defaultFill(arr: readonly DynamicValue[]): DynamicValue {
  const first = arr.find((x) => x !== null)
  return typeof first === 'string' ? '' : null
}

function shift(arr: DynamicValue[], count: number, fill: DynamicValue): DynamicValue[] {
  const n = arr.length
  const out: DynamicValue[] = new Array(n)
  for (let i = 0; i < n; i++) {
    const src = i + count
    out[i] = src >= 0 && src < n ? arr[src]! : fill
  }
  return out
}

function rotate(arr: DynamicValue[], count: number): DynamicValue[] {
  const n = arr.length
  if (n === 0) return []
  const k = ((count % n) + n) % n
  return [...arr.slice(k), ...arr.slice(0, k)]
}

function arraySplit(arr: DynamicValue[], indexes: readonly number[]): DynamicValue[] {
  const n = arr.length
  const cuts = indexes.map((i) => resolveIndex(Math.trunc(i), n))
  const out: DynamicValue[] = []
  let prev = 0
  for (const c of cuts) {
    const at = Math.max(prev, c)
    out.push(arr.slice(prev, at))
    prev = at
  }
  out.push(arr.slice(prev))
  return out
}

// Inside dynamic values datetimes, timespans and guids are kept as their text (types.ts); these
// recognise exactly the forms the engine writes, so such elements sort in their documented group.
const DATETIME_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,7})?Z$/
const TIMESPAN_TEXT = /^-?(?:\d+\.)?\d{2}:\d{2}:\d{2}(?:\.\d{1,7})?$/
const GUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Where array_sort_* puts an element: the documented type groups (0: numbers, datetimes and
 * timespans; 1: strings; 2: guids; 3: everything else), then a kind within the group and a value
 * to compare within that kind.
 */
interface SortKey {
  readonly group: number
  readonly kind: number
  readonly value: DynamicValue | bigint
}

function sortKey(v: DynamicValue): SortKey {
  if (typeof v === 'number' || typeof v === 'bigint') return { group: 0, kind: 0, value: v }
  if (typeof v === 'string') {
    if (DATETIME_TEXT.test(v)) {
      const ticks = parseDateTime(v)
      if (ticks !== null) return { group: 0, kind: 1, value: ticks }
    }
    if (TIMESPAN_TEXT.test(v)) {
      const ticks = parseTimespan(v)
      if (ticks !== null) return { group: 0, kind: 2, value: ticks }
    }
    return GUID_TEXT.test(v) ? { group: 2, kind: 0, value: v } : { group: 1, kind: 0, value: v }
  }
  return { group: 3, kind: 0, value: v }
}

/** Order within one group (same group): by kind, then by value. */
function compareInGroup(a: SortKey, b: SortKey): number {
  if (a.kind !== b.kind) return a.kind - b.kind
  // numbers (kind 0) may be exact longs (bigints) beside doubles: compareDynamic orders them exactly
  if (a.kind !== 0 && (typeof a.value === 'bigint' || typeof b.value === 'bigint')) {
    const x = typeof a.value === 'bigint' ? a.value : BigInt(a.value as number)
    const y = typeof b.value === 'bigint' ? b.value : BigInt(b.value as number)
    return x < y ? -1 : x > y ? 1 : 0
  }
  return compareDynamic(a.value, b.value)
}

/**
 * array_sort_asc/desc. One array → the sorted array. Several arrays → an array holding each
 * array reordered like the first (null for an array whose length differs); the engine expands
 * this into one column per input (`<name>_sorted`).
 */
function sortFunction(name: string, descending: boolean): ScalarFunction {
  return defineScalar({
    name,
    params: ['scalar'],
    min: 1,
    max: 65,
    result: 'dynamic',
    bind(args) {
      const last = args[args.length - 1]!
      const hasNullsLast = args.length > 1 && last.type === 'bool'
      const arrays = hasNullsLast ? args.slice(0, -1) : args
      // the arrays (all arguments but a trailing bool): a rule across arguments, not one kind each
      arrays.forEach((_, i) => {
        expectKind(name, args, i, 'dynamic')
      })
      const nullsLastOf = hasNullsLast ? coercer('bool', 'bool') : () => true
      const single = arrays.length === 1
      return (values) => {
        const nullsLast = hasNullsLast ? nullsLastOf(values[values.length - 1] ?? null) !== false : true
        const inputs = arrays.map((_, i) => asArray(values[i] ?? null))
        const first = inputs[0]
        if (!first) return single ? null : inputs.map(() => null)
        const order = first.map((_, i) => i)
        const keys = first.map((v) => (v === null ? null : sortKey(v)))
        order.sort((x, y) => {
          const a = keys[x]!
          const b = keys[y]!
          if (a === null || b === null) {
            if (a === b) return x - y
            const nullFirst = a === null ? -1 : 1
            return nullsLast ? -nullFirst : nullFirst
          }
          // the groups keep their documented order both ways; descending reverses each group
          if (a.group !== b.group) return a.group - b.group
          const c = compareInGroup(a, b)
          return (descending ? -c : c) || x - y
        })
        const sorted = inputs.map((arr) => (arr && arr.length === first.length ? order.map((i) => arr[i]!) : null))
        return single ? sorted[0]! : sorted
      }
    },
  })
}

/**
 * The columns Kusto gives array_sort_asc/desc with several arrays (`print array_sort_asc(a, b)` →
 * `a_sorted`, `b_sorted`; an unnamed argument i → `array<i>_sorted`), all dynamic. One column per
 * dynamic argument; a trailing bool (nulls_last) adds none.
 */
export function arraySortOutputs(args: readonly ArgInfo[]): { name: string; type: KqlType }[] {
  const out: { name: string; type: KqlType }[] = []
  for (let i = 0; i < args.length && args[i]!.type === 'dynamic'; i++) {
    const a = args[i]!
    const n = a.columnName ?? inferName(a.text)
    out.push({ name: n ? `${n}_sorted` : `array${i}_sorted`, type: 'dynamic' })
  }
  return out
}

function arrayIff(name: string, aliases: readonly string[]): ScalarFunction {
  return defineScalar({
    name,
    aliases,
    params: ['dynamic', 'scalar', 'scalar'],
    result: 'dynamic',
    bind(args) {
      const t = toDyn(args[1]!)
      const f = toDyn(args[2]!)
      const trueIsArray = args[1]!.type === 'dynamic'
      const falseIsArray = args[2]!.type === 'dynamic'
      return ([c, x, y]) => {
        const cond = asArray(c ?? null)
        if (!cond) return null
        const xa = trueIsArray ? asArray(x ?? null) : null
        const ya = falseIsArray ? asArray(y ?? null) : null
        const xs = trueIsArray ? null : t(x ?? null)
        const ys = falseIsArray ? null : f(y ?? null)
        return cond.map((b, i) => {
          const truthy = typeof b === 'boolean' ? b : typeof b === 'number' ? b !== 0 : null
          if (truthy === null) return null
          if (truthy) return xa ? (xa[i] ?? null) : trueIsArray ? ((x as DynamicValue) ?? null) : xs
          return ya ? (ya[i] ?? null) : falseIsArray ? ((y as DynamicValue) ?? null) : ys
        })
      }
    },
  })
}

const arraySum = defineScalar({
  name: 'array_sum',
  params: ['dynamic'],
  result: 'real',
  impl: ([a]) => {
    const arr = asArray(a)
    if (!arr) return null
    let sum = 0
    for (const x of arr) {
      // an exact long beyond 2^53 is a number too: summed as a double, as Kusto's real result
      if (typeof x === 'bigint') sum += Number(x)
      else if (typeof x === 'number') sum += x
      else return null
    }
    return sum
  },
})

function setFunction(name: string, combine: (sets: DynamicValue[][]) => DynamicValue[]): ScalarFunction {
  return defineScalar({
    name,
    params: ['dynamic'],
    min: 2,
    max: 64,
    result: 'dynamic',
    bind() {
      return (values) => {
        const arrays = values.map((v) => asArray(v ?? null))
        if (arrays.some((a) => a === null)) return null
        return combine(arrays as DynamicValue[][])
      }
    },
  })
}

const keysOf = (arr: readonly DynamicValue[]): Set<string> => new Set(arr.map(dynamicKey))

// ---------------------------------------------------------------------------------------------
// range()
// ---------------------------------------------------------------------------------------------

const MAX_RANGE = 1_048_576

const rangeFn = defineScalar({
  name: 'range',
  params: ['scalar', 'scalar', 'scalar'],
  min: 2,
  result: 'dynamic',
  bind(args) {
    const t0 = args[0]!.type
    const t1 = args[1]!.type
    if (t0 === 'datetime' || t0 === 'timespan') {
      if (t1 !== t0) throw functionError('range', `stop (${args[1]!.text}) must be a ${t0}, got ${t1}`)
      if (args[2] && args[2].type !== 'timespan')
        throw functionError('range', `step (${args[2].text}) must be a timespan, got ${args[2].type}`)
      return ([a, b, s]) => {
        const step = args[2] ? s : TICKS_PER_HOUR
        if (typeof a !== 'bigint' || typeof b !== 'bigint' || typeof step !== 'bigint' || step === 0n) return null
        const out: DynamicValue[] = []
        for (let v = a; (step > 0n ? v <= b : v >= b) && out.length < MAX_RANGE; v += step) out.push(asDynamic(t0, v))
        return out
      }
    }
    // the numeric overload (the kinds depend on the first argument's type)
    for (let i = 0; i < args.length; i++) expectKind('range', args, i, 'number')
    if (args.every((a) => a.type === 'int' || a.type === 'long')) return integerRange(args)
    const cs = args.map((a) => coercer('number', a.type))
    return (values) => {
      const [a, b, s] = values.map((v, i) => cs[i]!(v ?? null))
      const step = args[2] ? s : 1
      if (typeof a !== 'number' || typeof b !== 'number' || typeof step !== 'number' || step === 0 || !Number.isFinite(step)) return null
      const out: DynamicValue[] = []
      for (let i = 0; out.length < MAX_RANGE; i++) {
        const v = a + i * step
        if (step > 0 ? v > b : v < b) break
        out.push(v)
      }
      return out
    }
  },
})

/**
 * range() of ints and longs: exact 64-bit values (a double loses them past 2^53), stopping at the
 * int64 limits instead of wrapping around.
 */
function integerRange(args: readonly ArgInfo[]): BoundScalar['evaluate'] {
  const cs = args.map((a) => coercer('long', a.type))
  return (values) => {
    const [a, b, s] = values.map((v, i) => cs[i]!(v ?? null))
    const step = args[2] ? s : 1
    if (!isLongValue(a) || !isLongValue(b) || !isLongValue(step) || step === 0) return null
    const [from, to, by] = [longToBigInt(a), longToBigInt(b), longToBigInt(step)]
    const out: DynamicValue[] = []
    for (let v = from; (by > 0n ? v <= to : v >= to) && out.length < MAX_RANGE; v += by) out.push(canonLong(v))
    return out
  }
}

// ---------------------------------------------------------------------------------------------
// treepath()
// ---------------------------------------------------------------------------------------------

function treePaths(v: DynamicValue, prefix: string, out: Set<string>): void {
  if (Array.isArray(v)) {
    if (v.length === 0) return
    const p = `${prefix}[0]`
    out.add(p)
    for (const x of v) treePaths(x, p, out)
    return
  }
  const b = asBag(v)
  if (!b) return
  for (const [k, x] of Object.entries(b)) {
    const p = `${prefix}['${k}']`
    out.add(p)
    treePaths(x, p, out)
  }
}

// ---------------------------------------------------------------------------------------------
// The family
// ---------------------------------------------------------------------------------------------

const arr1 = (name: string, fn: (a: DynamicValue[]) => KqlValue, result: KqlType = 'dynamic'): ScalarFunction =>
  defineScalar({
    name,
    params: ['dynamic'],
    result,
    impl: ([a]) => {
      const arr = asArray(a)
      return arr ? fn(arr) : null
    },
  })

const shiftFunction = (name: string, sign: 1 | -1): ScalarFunction =>
  defineScalar({
    name,
    params: ['dynamic', 'integer', 'scalar'],
    min: 2,
    result: 'dynamic',
    bind(args) {
      const count = coercer('integer', args[1]!.type)
      const fill = args[2] ? toDyn(args[2]) : null
      return ([a, c, d]) => {
        const arr = asArray(a ?? null)
        const n = count(c ?? null)
        if (!arr || typeof n !== 'number') return null
        return shift(arr, sign * n, fill ? fill(d ?? null) : defaultFill(arr))
      }
    },
  })

const rotateFunction = (name: string, sign: 1 | -1): ScalarFunction =>
  defineScalar({
    name,
    params: ['dynamic', 'integer'],
    result: 'dynamic',
    impl: ([a, c]) => {
      const arr = asArray(a)
      return arr ? rotate(arr, sign * (c as number)) : null
    },
  })

const arrayIndexOfFn = defineScalar({
  name: 'array_index_of',
  params: ['dynamic', 'scalar', 'integer'],
  min: 2,
  max: 5,
  result: 'long',
  bind(args) {
    const value = toDyn(args[1]!)
    const ints = args.map((a) => coercer('integer', a.type))
    return (values) => {
      const arr = asArray(values[0] ?? null)
      if (!arr) return null
      const v = value(values[1] ?? null)
      const opt = (i: number, d: number): number | null => {
        if (i >= values.length) return d
        const x = ints[i]!(values[i] ?? null)
        return typeof x === 'number' ? x : null
      }
      const start = opt(2, 0)
      const length = opt(3, -1)
      const occurrence = opt(4, 1)
      if (start === null || length === null || occurrence === null) return null
      return arrayIndexOf(arr, v, start, length, occurrence)
    }
  },
})

const arraySplitFn = defineScalar({
  name: 'array_split',
  params: ['dynamic', 'scalar'],
  result: 'dynamic',
  prepare: (args) => {
    const t = args[1]!.type
    if (t !== 'int' && t !== 'long' && t !== 'dynamic')
      throw functionError('array_split', `index (${args[1]!.text}) must be an int or a dynamic array, got ${t}`)
  },
  impl: ([a, idx]) => {
    const arr = asArray(a)
    if (!arr) return null
    const list = typeof idx === 'number' ? [idx] : asArray(idx)
    if (!list || list.some((x) => typeof x !== 'number')) return null
    return arraySplit(arr, list as number[])
  },
})

const arraySliceFn = defineScalar({
  name: 'array_slice',
  params: ['dynamic', 'integer', 'integer'],
  result: 'dynamic',
  impl: ([a, s, e]) => {
    const arr = asArray(a)
    return arr ? arraySlice(arr, s as number, e as number) : null
  },
})

const arrayConcat = defineScalar({
  name: 'array_concat',
  params: ['dynamic'],
  min: 1,
  max: 64,
  result: 'dynamic',
  bind() {
    return (values) => {
      const out: DynamicValue[] = []
      for (const v of values) {
        const arr = asArray(v ?? null)
        if (!arr) return null
        out.push(...arr)
      }
      return out
    }
  },
})

const setHasElement = defineScalar({
  name: 'set_has_element',
  params: ['dynamic', 'scalar'],
  result: 'bool',
  bind(args) {
    const value = toDyn(args[1]!)
    return ([a, v]) => {
      const arr = asArray(a ?? null)
      if (!arr) return null
      const key = dynamicKey(value(v ?? null))
      return arr.some((x) => dynamicKey(x) === key)
    }
  },
})

const jaccardIndex = defineScalar({
  name: 'jaccard_index',
  params: ['dynamic', 'dynamic'],
  result: 'real',
  impl: ([a, b]) => {
    const x = asArray(a)
    const y = asArray(b)
    if (!x || !y) return null
    const kx = keysOf(x)
    const ky = keysOf(y)
    let inter = 0
    for (const k of kx) if (ky.has(k)) inter++
    const union = kx.size + ky.size - inter
    return union === 0 ? NaN : inter / union
  },
})

const repeatFn = defineScalar({
  name: 'repeat',
  params: ['scalar', 'integer'],
  result: 'dynamic',
  bind(args) {
    const value = toDyn(args[0]!)
    const count = coercer('integer', args[1]!.type)
    return ([v, c]) => {
      const n = count(c ?? null)
      if (typeof n !== 'number' || n < 0) return null
      const x = value(v ?? null)
      return new Array<DynamicValue>(Math.min(n, MAX_RANGE)).fill(x)
    }
  },
})

const zipFn = defineScalar({
  name: 'zip',
  params: ['dynamic'],
  min: 2,
  max: 16,
  result: 'dynamic',
  bind() {
    return (values) => {
      const arrays = values.map((v) => asArray(v ?? null))
      if (arrays.some((a) => a === null)) return null
      const n = Math.max(...arrays.map((a) => a!.length))
      const out: DynamicValue[] = []
      for (let i = 0; i < n; i++) out.push(arrays.map((a) => a![i] ?? null))
      return out
    }
  },
})

const packArray = defineScalar({
  name: 'pack_array',
  params: ['scalar'],
  min: 1,
  max: Infinity,
  result: 'dynamic',
  bind(args) {
    const conv = args.map(toDyn)
    return (values) => values.map((v, i) => conv[i]!(v ?? null))
  },
})

export const dynamicFunctions: readonly ScalarFunction[] = [
  ...sketchFunctions,
  arr1('array_length', (a) => a.length, 'long'),
  arr1('array_reverse', (a) => [...a].reverse()),
  arraySum,
  arrayConcat,
  arraySliceFn,
  arraySplitFn,
  arrayIndexOfFn,
  arrayIff('array_iff', ['array_iif']),
  shiftFunction('array_shift_left', 1),
  shiftFunction('array_shift_right', -1),
  rotateFunction('array_rotate_left', 1),
  rotateFunction('array_rotate_right', -1),
  sortFunction('array_sort_asc', false),
  sortFunction('array_sort_desc', true),
  setFunction('set_union', (sets) => distinct(sets.flat())),
  setFunction('set_intersect', (sets) => {
    const others = sets.slice(1).map(keysOf)
    return distinct(sets[0]!).filter((x) => others.every((o) => o.has(dynamicKey(x))))
  }),
  setFunction('set_difference', (sets) => {
    const others = sets.slice(1).map(keysOf)
    return distinct(sets[0]!).filter((x) => others.every((o) => !o.has(dynamicKey(x))))
  }),
  setHasElement,
  jaccardIndex,
  bagPack,
  bagPackColumns,
  packAll,
  bagMerge,
  bagSetKey,
  bagHasKey,
  bagRemoveKeys,
  bagZip,
  defineScalar({
    name: 'bag_keys',
    params: ['dynamic'],
    result: 'dynamic',
    impl: ([b]) => {
      const bag = asBag(b)
      return bag ? Object.keys(bag) : null
    },
  }),
  packArray,
  zipFn,
  repeatFn,
  rangeFn,
  defineScalar({
    name: 'treepath',
    params: ['dynamic'],
    result: 'dynamic',
    impl: ([v]) => {
      const out = new Set<string>()
      treePaths(v as DynamicValue, '', out)
      return [...out]
    },
  }),
  defineScalar({
    name: 'dynamic_to_json',
    params: ['scalar'],
    result: 'string',
    bind(args) {
      const t = args[0]!.type
      // Scalars print as tostring() does; only arrays and bags get the canonical (sorted-key) form.
      return ([v]) => {
        if (t !== 'dynamic') return valueToString(t, v ?? null)
        return v !== null && typeof v === 'object' ? canonicalJson(v as DynamicValue) : valueToString('dynamic', v ?? null)
      }
    },
  }),
]
