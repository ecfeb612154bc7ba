/**
 * @module
 * The hll() and tdigest() sketches (split out of aggregate-functions.ts, issue 19 item 6): the
 * aggregates that build and merge them and the scalar functions that read them (dcount_hll,
 * hll_merge, percentile_tdigest, ..., registered with the dynamic family).
 *
 * Sketches are dynamic values with the shape Kusto documents: hll → `[[1024,14],[keys],[]]`
 * (keys are exact: dcount is exact), tdigest → `[[7],[values],[weights]]` (exact values).
 * Datetimes and timespans inside a tdigest are kept as tick counts.
 */
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { asNumber, checkNumericLike, defineAggregate, fromNumber, nearestRank, one, prefixed } from './aggregate-definitions.js'
import { checkArity, typeLiteralArg } from './function-definitions.js'
import type { AggregateFunction, ArgInfo, ScalarFunction } from './function-types.js'
import { asArray, checkKind, scalarKey } from './numeric-helpers.js'

// ---------------------------------------------------------------------------------------------
// Sketches: hll (exact distinct keys) and tdigest (exact weighted values)
// ---------------------------------------------------------------------------------------------

/** The keys held by an hll() value, or null when the value is not one. */
export function hllKeys(v: KqlValue | undefined): string[] | null {
  const a = asArray(v)
  if (!a || a.length < 2) return null
  const keys = asArray(a[1])
  return keys?.every((k) => typeof k === 'string') ? (keys as string[]) : null
}

export function makeHll(keys: Iterable<string>): DynamicValue {
  return [[1024, 14], [...keys], []]
}

/** The (value, weight) pairs held by a tdigest() value, or null when the value is not one. */
export function tdigestPairs(v: KqlValue | undefined): [number, number][] | null {
  const a = asArray(v)
  if (!a || a.length < 3) return null
  const values = asArray(a[1])
  const weights = asArray(a[2])
  if (!values || !weights || values.length !== weights.length) return null
  const out: [number, number][] = []
  for (let i = 0; i < values.length; i++) {
    const x = values[i]
    const w = weights[i]
    if (typeof x !== 'number' || typeof w !== 'number') return null
    out.push([x, w])
  }
  return out
}

export function makeTdigest(pairs: Iterable<readonly [number, number]>): DynamicValue {
  const merged = new Map<number, number>()
  for (const [x, w] of pairs) merged.set(x, (merged.get(x) ?? 0) + w)
  return [[7], [...merged.keys()], [...merged.values()]]
}

/** Nearest-rank percentile over tdigest pairs. */
export function tdigestPercentile(pairs: readonly [number, number][], p: number): number | null {
  const sorted = [...pairs].sort((a, b) => a[0] - b[0])
  const total = sorted.reduce((s, [, w]) => s + w, 0)
  const v = nearestRank(sorted, total, p)
  return typeof v === 'number' ? v : null
}

function hllAggregate(name: string, predicate: boolean): AggregateFunction {
  return defineAggregate({
    name,
    arity: predicate ? [2, 3] : [1, 2],
    ...(predicate ? { predicate: 1 } : {}),
    output: (args) => one(prefixed('hll', args[0]), 'dynamic'),
    create: () => {
      const keys = new Set<string>()
      return {
        // as dcount: nulls are ignored, "" is a value
        add(values) {
          const v = values[0]
          if (v !== null && v !== undefined) keys.add(scalarKey(v))
        },
        result: () => [makeHll(keys)],
      }
    },
  })
}

const hllMerge = defineAggregate({
  name: 'hll_merge',
  arity: [1, 1],
  check: (args) => checkKind('hll_merge', args, 0, 'dynamic'),
  output: (args) => one(prefixed('hll_merge', args[0]), 'dynamic'),
  create: () => {
    const keys = new Set<string>()
    return {
      add(values) {
        for (const k of hllKeys(values[0]) ?? []) keys.add(k)
      },
      result: () => [makeHll(keys)],
    }
  },
})

const tdigest = defineAggregate({
  name: 'tdigest',
  arity: [1, 2],
  check: (args) => checkNumericLike('tdigest', args, 0, ['datetime', 'timespan']),
  output: (args) => one(prefixed('tdigest', args[0]), 'dynamic'),
  create: (args) => {
    const weighted = args.length === 2
    const pairs: [number, number][] = []
    return {
      add(values) {
        const x = asNumber(values[0])
        const w = weighted ? asNumber(values[1]) : 1
        if (x === null || Number.isNaN(x) || w === null || w <= 0) return
        pairs.push([x, w])
      },
      result: () => [makeTdigest(pairs)],
    }
  },
})

const tdigestMerge = defineAggregate({
  name: 'tdigest_merge',
  aliases: ['merge_tdigest'],
  arity: [1, 1],
  check: (args) => checkKind('tdigest_merge', args, 0, 'dynamic'),
  output: (args) => one(prefixed('merge_tdigests', args[0]), 'dynamic'),
  create: () => {
    const pairs: [number, number][] = []
    return {
      add(values) {
        pairs.push(...(tdigestPairs(values[0]) ?? []))
      },
      result: () => [makeTdigest(pairs)],
    }
  },
})

/** The sketch aggregates (registered after the other aggregates: registry.ts). */
export const sketchAggregates: readonly AggregateFunction[] = [
  hllAggregate('hll', false),
  hllAggregate('hll_if', true),
  hllMerge,
  tdigest,
  tdigestMerge,
]

// ---------------------------------------------------------------------------------------------
// Scalar functions over sketches (registered with the dynamic family)
// ---------------------------------------------------------------------------------------------

function sketchArgs(name: string, args: readonly ArgInfo[], min: number, max: number): void {
  checkArity(name, args, min, max)
  for (let i = 0; i < args.length; i++) checkKind(name, args, i, 'dynamic')
}

export const sketchFunctions: readonly ScalarFunction[] = [
  {
    name: 'dcount_hll',
    bind(args) {
      sketchArgs('dcount_hll', args, 1, 1)
      return { type: 'long', evaluate: ([h]) => hllKeys(h)?.length ?? null }
    },
  },
  {
    name: 'hll_merge',
    bind(args) {
      sketchArgs('hll_merge', args, 2, 64)
      return {
        type: 'dynamic',
        evaluate(values) {
          const keys = new Set<string>()
          for (const v of values) {
            const k = hllKeys(v)
            if (!k) return null
            k.forEach((x) => {
              keys.add(x)
            })
          }
          return makeHll(keys)
        },
      }
    },
  },
  {
    name: 'merge_tdigest',
    aliases: ['tdigest_merge'],
    bind(args) {
      sketchArgs('merge_tdigest', args, 1, 64)
      return {
        type: 'dynamic',
        evaluate(values) {
          const pairs: [number, number][] = []
          for (const v of values) {
            const p = tdigestPairs(v)
            if (!p) return null
            pairs.push(...p)
          }
          return makeTdigest(pairs)
        },
      }
    },
  },
  {
    name: 'percentile_tdigest',
    bind(args) {
      checkArity('percentile_tdigest', args, 2, 3)
      checkKind('percentile_tdigest', args, 0, 'dynamic')
      checkKind('percentile_tdigest', args, 1, 'real')
      // without a type literal Kusto types the result dynamic (the number inside it)
      const type: KqlType = args[2] ? typeLiteralArg('percentile_tdigest', args[2]) : 'dynamic'
      return {
        type,
        evaluate([td, p]) {
          const pairs = tdigestPairs(td)
          if (!pairs || typeof p !== 'number') return null
          const r = tdigestPercentile(pairs, p)
          return type === 'dynamic' ? r : fromNumber(type, r)
        },
      }
    },
  },
  {
    name: 'percentiles_array_tdigest',
    aliases: ['percentile_array_tdigest'],
    bind(args) {
      checkArity('percentiles_array_tdigest', args, 2, Infinity)
      checkKind('percentiles_array_tdigest', args, 0, 'dynamic')
      return {
        type: 'dynamic',
        evaluate(values) {
          const pairs = tdigestPairs(values[0])
          if (!pairs) return null
          const ps: number[] = []
          for (const v of values.slice(1)) {
            if (typeof v === 'number') ps.push(v)
            else if (Array.isArray(v)) ps.push(...v.filter((x): x is number => typeof x === 'number'))
          }
          return ps.map((p) => tdigestPercentile(pairs, p))
        },
      }
    },
  },
  {
    name: 'percentrank_tdigest',
    bind(args) {
      checkArity('percentrank_tdigest', args, 2)
      checkKind('percentrank_tdigest', args, 0, 'dynamic')
      return {
        type: 'real',
        evaluate([td, v]) {
          const pairs = tdigestPairs(td)
          const x = asNumber(v)
          if (!pairs || x === null) return null
          const total = pairs.reduce((s, [, w]) => s + w, 0)
          if (total === 0) return null
          const below = pairs.reduce((s, [y, w]) => (y <= x ? s + w : s), 0)
          return (below / total) * 100
        },
      }
    },
  },
  {
    name: 'rank_tdigest',
    bind(args) {
      checkArity('rank_tdigest', args, 2)
      checkKind('rank_tdigest', args, 0, 'dynamic')
      return {
        type: 'real',
        evaluate([td, v]) {
          const pairs = tdigestPairs(td)
          const x = asNumber(v)
          if (!pairs || x === null) return null
          return pairs.reduce((s, [y, w]) => (y <= x ? s + w : s), 0)
        },
      }
    },
  },
]
