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
import { asNumber, defineAggregate, fromNumber, nearestRank, one, prefixed } from './aggregate-definitions.js'
import { defineScalar, typeLiteralArg } from './function-definitions.js'
import type { AggregateFunction, ArgInfo, ScalarFunction } from './function-types.js'
import { asArray, scalarKey } from './numeric-helpers.js'

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
    params: predicate ? ['scalar', 'predicate', 'scalar'] : ['scalar', 'scalar'],
    min: predicate ? 2 : 1,
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
  params: ['dynamic'],
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
  params: ['numberOrTime', 'scalar'],
  min: 1,
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
  params: ['dynamic'],
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

/** The result type of percentile_tdigest(): a `typeof(T)` third argument, else dynamic (the number inside it). */
function percentileTdigestType(args: readonly ArgInfo[]): KqlType {
  return args[2] ? typeLiteralArg('percentile_tdigest', args[2]) : 'dynamic'
}

/** rank_tdigest / percentrank_tdigest: from the weight of the values at most x and the total weight. */
function rankFunction(name: string, answer: (below: number, total: number) => number | null): ScalarFunction {
  return defineScalar({
    name,
    params: ['dynamic', 'scalar'],
    result: 'real',
    bind:
      () =>
      ([td, v]) => {
        const pairs = tdigestPairs(td)
        const x = asNumber(v)
        if (!pairs || x === null) return null
        const total = pairs.reduce((s, [, w]) => s + w, 0)
        return answer(
          pairs.reduce((s, [y, w]) => (y <= x ? s + w : s), 0),
          total,
        )
      },
  })
}

export const sketchFunctions: readonly ScalarFunction[] = [
  defineScalar({
    name: 'dcount_hll',
    params: ['dynamic'],
    result: 'long',
    bind:
      () =>
      ([h]) =>
        hllKeys(h)?.length ?? null,
  }),
  defineScalar({
    name: 'hll_merge',
    params: ['dynamic'],
    min: 2,
    max: 64,
    result: 'dynamic',
    bind: () => (values) => {
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
  }),
  defineScalar({
    name: 'merge_tdigest',
    aliases: ['tdigest_merge'],
    params: ['dynamic'],
    min: 1,
    max: 64,
    result: 'dynamic',
    bind: () => (values) => {
      const pairs: [number, number][] = []
      for (const v of values) {
        const p = tdigestPairs(v)
        if (!p) return null
        pairs.push(...p)
      }
      return makeTdigest(pairs)
    },
  }),
  defineScalar({
    name: 'percentile_tdigest',
    params: ['dynamic', 'real', 'scalar'],
    min: 2,
    result: percentileTdigestType,
    bind: (args) => {
      const type = percentileTdigestType(args)
      return ([td, p]) => {
        const pairs = tdigestPairs(td)
        if (!pairs || typeof p !== 'number') return null
        const r = tdigestPercentile(pairs, p)
        return type === 'dynamic' ? r : fromNumber(type, r)
      }
    },
  }),
  defineScalar({
    name: 'percentiles_array_tdigest',
    aliases: ['percentile_array_tdigest'],
    params: ['dynamic', 'scalar'],
    max: Infinity,
    result: 'dynamic',
    bind: () => (values) => {
      const pairs = tdigestPairs(values[0])
      if (!pairs) return null
      const ps: number[] = []
      for (const v of values.slice(1)) {
        if (typeof v === 'number') ps.push(v)
        else if (Array.isArray(v)) ps.push(...v.filter((x): x is number => typeof x === 'number'))
      }
      return ps.map((p) => tdigestPercentile(pairs, p))
    },
  }),
  rankFunction('percentrank_tdigest', (below, total) => (total === 0 ? null : (below / total) * 100)),
  rankFunction('rank_tdigest', (below) => below),
]
