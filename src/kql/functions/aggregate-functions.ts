/**
 * @module
 * KQL aggregate functions (see ./README.md), used by `summarize` (and `make-series`): counting,
 * sums and averages, extremes (and arg_max/arg_min), distinct counts, exact nearest-rank
 * percentiles (plain and weighted), lists, sets and bags, dispersion, bitwise folds and schema
 * inference. How they are defined and named: ./aggregate-definitions.ts; the hll()/tdigest()
 * sketches: ./sketch-aggregates.ts.
 *
 * Conventions for the binder (kql-core):
 * - `add(args)` receives the evaluated explicit arguments in order; when `*` was written
 *   (`arg_max(ts, *)`, `take_any(*)`), the values of `options.inputColumns` follow them in that
 *   order. Pass as `inputColumns` the input columns minus the `by` keys: Kusto's `*` excludes
 *   the group keys (arg_max(Version, *) by Fruit → Fruit, Version, Color).
 * - Output names are Kusto's defaults (`count_`, `sum_x`, `percentile_x_95`, `list_x`, ...),
 *   derived from a bare column (`columnName`) or, for an expression, from its first column
 *   (`sum(todouble(d.x))` → `sum_d_x`).
 */

import { type Long, longAdd } from '../long.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import {
  argName,
  asNumber,
  type Bag,
  constantInt,
  defineAggregate,
  isMissing,
  nearestRank,
  type Options,
  one,
  prefixed,
  truthy,
} from './aggregate-definitions.js'
import { constantOf, functionError } from './function-definitions.js'
import type { Accumulator, AggregateFunction, AggregateOutput, ArgInfo } from './function-types.js'
import { asBag, asDynamic, compareScalar, dynamicKey, scalarKey } from './numeric-helpers.js'

// ---------------------------------------------------------------------------------------------
// count, sum, avg, min, max
// ---------------------------------------------------------------------------------------------

const count = defineAggregate({
  name: 'count',
  params: ['scalar'],
  min: 0,
  // count(x) with a bool is the obsolete spelling of countif(x) (named count_); any other argument
  // counts every row, nulls included, and is named count_<x> (summarize documentation, "The
  // standard count function includes null values in its count": count(y) = 2 over [null, 5]).
  output: (args) => one(args.length === 1 && args[0]!.type !== 'bool' ? prefixed('count', args[0]) : 'count_', 'long'),
  create: (args) => {
    let n = 0
    const predicate = args.length === 1 && args[0]!.type === 'bool'
    return {
      add(values) {
        if (!predicate || values[0] === true) n++
      },
      result: () => [n],
    }
  },
})

const countif = defineAggregate({
  name: 'countif',
  params: ['predicate'],
  output: () => one('countif_', 'long'),
  create: () => {
    let n = 0
    return {
      add: () => {
        n++
      },
      result: () => [n],
    }
  },
})

function sumType(args: readonly ArgInfo[]): KqlType {
  const t = args[0]!.type
  return t === 'int' ? 'long' : t === 'dynamic' ? 'real' : t
}

function sumAggregate(name: string, withPredicate: boolean): AggregateFunction {
  return defineAggregate({
    name,
    params: withPredicate ? ['numberOrTimespan', 'predicate'] : ['numberOrTimespan'],
    output: (args) => one(prefixed(name, args[0]), sumType(args)),
    create: (args) => {
      const type = sumType(args)
      if (type === 'timespan') {
        // Kusto's summarize defaults: sum()/sumif() of no (non-null) values is 0
        let total = 0n
        return {
          add(values) {
            const v = values[0]
            if (typeof v === 'bigint') total += v
          },
          result: () => [total],
        }
      }
      if (type === 'long') {
        // exact 64-bit, wrapping on overflow as long arithmetic does (long.ts)
        let total: Long = 0
        return {
          add(values) {
            const v = values[0]
            if (typeof v === 'number') total = longAdd(total, Math.trunc(v))
            else if (typeof v === 'bigint') total = longAdd(total, v)
          },
          result: () => [total],
        }
      }
      let total = 0
      return {
        add(values) {
          const v = asNumber(values[0])
          if (v !== null) total += v
        },
        result: () => [total],
      }
    },
  })
}

/**
 * The mean of integers (a real, as Kusto's avg of long): the exact sum, not wrapped at 64 bits,
 * rounded to a double once and divided once by the count — what SQL computes on every backend
 * (CAST(SUM(x) AS double) / COUNT(x)), where adding doubles row by row would round each time past
 * 2^53 (issue 17). Plain numbers while the running sum is a safe integer, a bigint beyond.
 */
function exactMean(): Accumulator {
  let small = 0
  let big = 0n
  let n = 0
  return {
    add(values) {
      const v = values[0]
      if (typeof v === 'number') {
        const x = Math.trunc(v)
        if (Math.abs(small) + Math.abs(x) <= Number.MAX_SAFE_INTEGER) small += x
        else {
          big += BigInt(small) + BigInt(x)
          small = 0
        }
      } else if (typeof v === 'bigint') big += v
      else return
      n++
    },
    // no (non-null) values: 0 / 0, so NaN (summarize documentation, aggregates default values)
    result: () => [n === 0 ? NaN : (big === 0n ? small : Number(big + BigInt(small))) / n],
  }
}

function avgAggregate(name: string, withPredicate: boolean): AggregateFunction {
  const outType = (args: readonly ArgInfo[]): KqlType => {
    const t = args[0]!.type
    return t === 'timespan' || t === 'datetime' || t === 'decimal' ? t : 'real'
  }
  return defineAggregate({
    name,
    params: withPredicate ? ['numberOrTime', 'predicate'] : ['numberOrTime'],
    output: (args) => one(prefixed(name, args[0]), outType(args)),
    create: (args) => {
      const type = outType(args)
      if (type === 'timespan' || type === 'datetime') {
        let sum = 0n
        let n = 0n
        return {
          add(values) {
            const v = values[0]
            if (typeof v === 'bigint') {
              sum += v
              n++
            }
          },
          result: () => [n === 0n ? null : sum / n],
        }
      }
      if (args[0]!.type === 'long' || args[0]!.type === 'int') return exactMean()
      let sum = 0
      let n = 0
      return {
        add(values) {
          const v = asNumber(values[0])
          if (v !== null) {
            sum += v
            n++
          }
        },
        // no (non-null) values: 0 / 0, so NaN (summarize documentation, aggregates default values)
        result: () => [n === 0 ? NaN : sum / n],
      }
    },
  })
}

function extremeAggregate(name: string, sign: 1 | -1, withPredicate: boolean): AggregateFunction {
  return defineAggregate({
    name,
    params: withPredicate ? ['orderable', 'predicate'] : ['orderable'],
    output: (args) => one(prefixed(name, args[0]), args[0]!.type),
    create: (args) => {
      const t = args[0]!.type
      let best: KqlValue = null
      return {
        add(values) {
          const v = values[0]
          if (isMissing(t, v) || (typeof v === 'number' && Number.isNaN(v))) return
          if (best === null || sign * compareScalar(v!, best) > 0) best = v!
        },
        result: () => [best === null && t === 'string' ? '' : best],
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Distinct counts
// ---------------------------------------------------------------------------------------------

function distinctCount(name: string, prefix: string, withPredicate: boolean, maxArgs: number): AggregateFunction {
  return defineAggregate({
    name,
    params: withPredicate ? ['scalar', 'predicate', 'scalar'] : ['scalar', 'scalar'],
    min: withPredicate ? 2 : 1,
    max: maxArgs,
    output: (args) => one(prefixed(prefix, args[0]), 'long'),
    create: () => {
      const seen = new Set<string>()
      return {
        // nulls are ignored; "" is a value (strings have no null), as make_set counts it
        add(values) {
          const v = values[0]
          if (v !== null && v !== undefined) seen.add(scalarKey(v))
        },
        result: () => [seen.size],
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Percentiles (exact nearest rank; weighted variants repeat each value `weight` times)
// ---------------------------------------------------------------------------------------------

function percentileLabel(p: number): string {
  return String(p).replace('.', '_').replace('-', '_')
}

/** Reads the percentile list: constant numbers, or (for *_array) a constant dynamic array. */
function percentileList(name: string, args: readonly ArgInfo[], from: number, allowArray: boolean): number[] {
  const out: number[] = []
  for (let i = from; i < args.length; i++) {
    const v = constantOf(args[i])
    if (typeof v === 'number') out.push(v)
    else if (allowArray && Array.isArray(v) && v.every((x) => typeof x === 'number')) out.push(...(v as number[]))
    else
      throw functionError(
        name,
        `percentile (${args[i]!.text}) must be a constant number${allowArray ? ' or a constant dynamic array of numbers' : ''}`,
      )
  }
  for (const p of out) if (p < 0 || p > 100) throw functionError(name, `percentile ${p} is outside 0..100`)
  return out
}

function percentileType(args: readonly ArgInfo[]): KqlType {
  const t = args[0]!.type
  return t === 'int' ? 'long' : t === 'dynamic' || t === 'decimal' ? 'real' : t
}

function percentileAggregate(
  name: string,
  weighted: boolean,
  shape: 'one' | 'many' | 'array',
  arrayPrefix = 'percentiles',
): AggregateFunction {
  const first = weighted ? 2 : 1
  return defineAggregate({
    name,
    params: weighted ? ['numberOrTime', 'integer', 'scalar'] : ['numberOrTime', 'scalar'],
    max: shape === 'one' ? first + 1 : Infinity,
    bind(args) {
      const type = percentileType(args)
      const ps = percentileList(name, args, first, shape === 'array')
      const base = argName(args[0]) ?? ''
      const outputs: AggregateOutput[] =
        shape === 'array'
          ? [{ name: `${arrayPrefix}_${base}`, type: 'dynamic' }]
          : ps.map((p) => ({ name: `percentile_${base}_${percentileLabel(p)}`, type }))
      return {
        outputs,
        create() {
          const values: [KqlValue, number][] = []
          let total = 0
          return {
            add(vs) {
              const v = vs[0]
              if (v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v))) return
              const w = weighted ? asNumber(vs[1]) : 1
              if (w === null || w <= 0) return
              values.push([v, w])
              total += w
            },
            result() {
              values.sort((a, b) => compareScalar(a[0], b[0]))
              const results = ps.map((p) => nearestRank(values, total, p))
              if (shape !== 'array') return results
              return [values.length === 0 ? null : results.map((r) => asDynamic(type, r))]
            },
          }
        },
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Lists, sets, bags
// ---------------------------------------------------------------------------------------------

const MAX_SIZE = 1_048_576

function listAggregate(
  name: string,
  opts: { predicate: boolean; nulls: boolean; legacyLimit?: boolean; aliases?: readonly string[] },
): AggregateFunction {
  const sizeIndex = opts.predicate ? 2 : 1
  return defineAggregate({
    name,
    ...(opts.aliases ? { aliases: opts.aliases } : {}),
    params: opts.nulls ? ['scalar'] : opts.predicate ? ['scalar', 'predicate', 'scalar'] : ['scalar', 'scalar'],
    min: opts.nulls ? 1 : sizeIndex,
    output: (args) => one(prefixed('list', args[0]), 'dynamic'),
    create: (args) => {
      const t = args[0]!.type
      const limit = constantInt(name, args[sizeIndex], 'max size') ?? (opts.legacyLimit ? 128 : MAX_SIZE)
      const out: DynamicValue[] = []
      return {
        add(values) {
          const v = values[0]
          if (!opts.nulls && (v === null || v === undefined)) return
          if (out.length < limit) out.push(asDynamic(t, v ?? null))
        },
        result: () => [out],
      }
    },
  })
}

function setAggregate(name: string, predicate: boolean, aliases?: readonly string[], legacyLimit = false): AggregateFunction {
  const sizeIndex = predicate ? 2 : 1
  return defineAggregate({
    name,
    ...(aliases ? { aliases } : {}),
    params: predicate ? ['scalar', 'predicate', 'scalar'] : ['scalar', 'scalar'],
    min: sizeIndex,
    output: (args) => one(prefixed('set', args[0]), 'dynamic'),
    create: (args) => {
      const t = args[0]!.type
      const limit = constantInt(name, args[sizeIndex], 'max size') ?? (legacyLimit ? 128 : MAX_SIZE)
      const seen = new Set<string>()
      const out: DynamicValue[] = []
      const put = (x: DynamicValue): void => {
        if (x === null) return
        const k = dynamicKey(x)
        if (seen.has(k) || out.length >= limit) return
        seen.add(k)
        out.push(x)
      }
      return {
        add(values) {
          const v = values[0]
          if (v === null || v === undefined) return
          const d = asDynamic(t, v)
          // make_set flattens array values (documented: a set from an array column holds the elements)
          if (t === 'dynamic' && Array.isArray(d)) d.forEach(put)
          else put(d)
        },
        result: () => [out],
      }
    },
  })
}

function bagAggregate(name: string, predicate: boolean, prefix = 'bag'): AggregateFunction {
  const sizeIndex = predicate ? 2 : 1
  return defineAggregate({
    name,
    params: predicate ? ['dynamic', 'predicate', 'scalar'] : ['dynamic', 'scalar'],
    min: sizeIndex,
    output: (args) => one(prefixed(prefix, args[0]), 'dynamic'),
    create: (args) => {
      const limit = constantInt(name, args[sizeIndex], 'max size') ?? MAX_SIZE
      const out: Bag = {}
      let size = 0
      return {
        add(values) {
          const b = asBag(values[0])
          if (!b) return
          for (const [k, x] of Object.entries(b)) {
            if (k in out || size >= limit) continue
            out[k] = x
            size++
          }
        },
        result: () => [out],
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// arg_max / arg_min / take_any
// ---------------------------------------------------------------------------------------------

function _starColumns(options: Options, exclude: string | undefined): readonly AggregateOutput[] {
  return options.inputColumns.filter((c) => c.name !== exclude)
}

/**
 * arg_max/arg_min: the first column is the extremised expression, then the returned expressions
 * (`*` = the input columns not already output). Names follow Kusto.Language: a column keeps its
 * name; an unnamed primary is `max_`/`min_`, an unnamed returned expression `max_<primary>_arg<i>`.
 * The deprecated argmax/argmin prefix the returned columns with `<primary>_`.
 */
function argExtreme(name: string, sign: 1 | -1, deprecated: boolean): AggregateFunction {
  const word = sign > 0 ? 'max' : 'min'
  return defineAggregate({
    name,
    params: ['orderable', 'scalar'],
    min: 1,
    max: Infinity,
    bind(args, options) {
      const key = args[0]!
      const keyName = argName(key) ?? (deprecated ? `${word}_${key.text}` : `${word}_`)
      const explicit = args.slice(1)
      const seen = new Set<string>([keyName])
      const outputs: AggregateOutput[] = [{ name: keyName, type: key.type }]
      const picks: number[] = [0]
      const rename = (n: string): string => (deprecated ? `${keyName}_${n}` : n)
      explicit.forEach((a, i) => {
        const n = argName(a)
        if (a.columnName && options.star && seen.has(a.columnName)) return
        if (a.columnName) seen.add(a.columnName)
        outputs.push({
          name: n !== undefined ? rename(n) : deprecated ? `${keyName}_arg${i + 1}` : `${word}_${argName(key) ?? ''}_arg${i + 1}`,
          type: a.type,
        })
        picks.push(i + 1)
      })
      if (options.star) {
        options.inputColumns.forEach((c, i) => {
          if (seen.has(c.name)) return
          seen.add(c.name)
          outputs.push({ name: rename(c.name), type: c.type })
          picks.push(args.length + i)
        })
      }
      return {
        outputs,
        create() {
          let best: KqlValue = null
          let row: KqlValue[] | null = null
          return {
            add(values) {
              const v = values[0]
              const missing = isMissing(key.type, v) || (typeof v === 'number' && Number.isNaN(v))
              if (missing) {
                if (row === null) row = picks.map((i) => values[i] ?? null)
                return
              }
              if (best === null || sign * compareScalar(v!, best) > 0) {
                best = v!
                row = picks.map((i) => values[i] ?? null)
              }
            },
            result: () => row ?? outputs.map((o) => (o.type === 'string' ? '' : null)),
          }
        },
      }
    },
  })
}

/**
 * take_any(e1, ...| *), any(...), take_anyif(e, p), anyif(e, p). Names follow Kusto.Language:
 * columns keep their names, unnamed expressions are `any_arg<i>` (take_any) / `arg<i>` (any with
 * several arguments); any(x) alone is `any_x`, anyif(x, p) is `anyif_x`, take_anyif(x, p) is `x`.
 */
function takeAny(name: string, mode: 'take_any' | 'any' | 'take_anyif' | 'anyif'): AggregateFunction {
  const predicate = mode === 'take_anyif' || mode === 'anyif'
  return defineAggregate({
    name,
    params: predicate ? ['scalar', 'predicate'] : ['scalar'],
    ...(predicate ? {} : { max: Infinity, minWithStar: 0 }),
    bind(args, options) {
      const explicit = predicate ? args.slice(0, 1) : args
      const singlePrefixed = (mode === 'any' && explicit.length === 1 && !options.star) || mode === 'anyif'
      const outputs: AggregateOutput[] = []
      const picks: number[] = []
      const seen = new Set<string>()
      explicit.forEach((a, i) => {
        if (options.star && a.columnName && seen.has(a.columnName)) return
        if (a.columnName) seen.add(a.columnName)
        const n = argName(a)
        const nameOf = singlePrefixed ? `${mode}_${n ?? ''}` : (n ?? (mode === 'take_any' ? `any_arg${i}` : `arg${i}`))
        outputs.push({ name: nameOf, type: a.type })
        picks.push(i)
      })
      if (options.star) {
        options.inputColumns.forEach((c, i) => {
          if (seen.has(c.name)) return
          seen.add(c.name)
          outputs.push({ name: c.name, type: c.type })
          picks.push(args.length + i)
        })
      }
      // A single column prefers a non-null, non-empty value (documented); several take one row.
      const single = outputs.length === 1
      return {
        outputs,
        create() {
          let row: KqlValue[] | null = null
          let settled = false
          return {
            add(values) {
              if (settled) return
              if (predicate && !truthy(values[1])) return
              const picked = picks.map((i) => values[i] ?? null)
              if (row === null) row = picked
              if (!single || !isMissing(outputs[0]!.type, picked[0])) {
                row = picked
                settled = true
              }
            },
            result: () => row ?? outputs.map((o) => (o.type === 'string' ? '' : null)),
          }
        },
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Dispersion
// ---------------------------------------------------------------------------------------------

function dispersion(name: string, kind: 'stdev' | 'variance', population: boolean, withPredicate: boolean): AggregateFunction {
  return defineAggregate({
    name,
    params: withPredicate ? ['number', 'predicate'] : ['number'],
    output: (args) => one(prefixed(name, args[0]), 'real'),
    create: () => {
      // Welford's online algorithm: numerically stable in one pass.
      let n = 0
      let mean = 0
      let m2 = 0
      return {
        add(values) {
          const x = asNumber(values[0])
          if (x === null) return
          n++
          const delta = x - mean
          mean += delta / n
          m2 += delta * (x - mean)
        },
        result() {
          // Kusto's summarize defaults: stdev/variance(if) of no values are 0; the population forms null
          if (n === 0) return [population ? null : 0]
          const variance = population ? m2 / n : n === 1 ? 0 : m2 / (n - 1)
          return [kind === 'stdev' ? Math.sqrt(variance) : variance]
        },
      }
    },
  })
}

/** covariance(if) / covariancep(if): the sample (n - 1) or population (n) covariance of x and y. */
function covariance(name: string, population: boolean, withPredicate: boolean): AggregateFunction {
  return defineAggregate({
    name,
    params: withPredicate ? ['number', 'number', 'predicate'] : ['number', 'number'],
    output: (args) => one(`${prefixed(name, args[0])}_${argName(args[1]) ?? ''}`, 'real'),
    create: () => {
      // the bivariate Welford update: one pass, numerically stable
      let n = 0
      let meanX = 0
      let meanY = 0
      let c = 0
      return {
        add(values) {
          const x = asNumber(values[0])
          const y = asNumber(values[1])
          if (x === null || y === null) return
          n++
          const dx = x - meanX
          meanX += dx / n
          meanY += (y - meanY) / n
          c += dx * (y - meanY)
        },
        result() {
          // the same defaults as variance/variancep: no values → 0 (sample) or null (population)
          if (n === 0) return [population ? null : 0]
          return [population ? c / n : n === 1 ? 0 : c / (n - 1)]
        },
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Bitwise folds
// ---------------------------------------------------------------------------------------------

function bitwiseFold(name: string, op: (a: bigint, b: bigint) => bigint): AggregateFunction {
  return defineAggregate({
    name,
    params: ['integer'],
    // Kusto names these after the argument itself (FirstArgument), typed like it
    output: (args) => one(argName(args[0]) ?? '', args[0]!.type === 'int' ? 'int' : 'long'),
    create: () => {
      let acc: bigint | null = null
      return {
        add(values) {
          const v = values[0]
          if (typeof v !== 'number') return
          const b = BigInt.asIntN(64, BigInt(Math.trunc(v)))
          acc = acc === null ? b : BigInt.asIntN(64, op(acc, b))
        },
        result: () => [acc === null ? null : Number(acc)],
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// buildschema
// ---------------------------------------------------------------------------------------------

/** A schema node: a set of primitive names, plus at most one container (bag) and one array item type. */
interface SchemaNode {
  primitives: string[]
  bag: Map<string, SchemaNode> | null
  items: SchemaNode | null
  order: ('p' | 'bag' | 'items')[]
}

const newNode = (): SchemaNode => ({ primitives: [], bag: null, items: null, order: [] })

function primitiveName(v: DynamicValue): string {
  if (typeof v === 'string') return 'string'
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number') return Number.isInteger(v) ? (Math.abs(v) <= 2147483647 ? 'int' : 'long') : 'double'
  if (typeof v === 'bigint') return 'long'
  return 'null'
}

function absorb(node: SchemaNode, v: DynamicValue): void {
  if (v === null) return
  if (Array.isArray(v)) {
    if (!node.items) {
      node.items = newNode()
      node.order.push('items')
    }
    for (const x of v) absorb(node.items, x)
    return
  }
  if (typeof v === 'object') {
    if (!node.bag) {
      node.bag = new Map()
      node.order.push('bag')
    }
    for (const [k, x] of Object.entries(v)) {
      let child = node.bag.get(k)
      if (!child) {
        child = newNode()
        node.bag.set(k, child)
      }
      absorb(child, x)
    }
    return
  }
  // Kusto reports whole JSON numbers as long (int is not distinguished inside dynamic).
  const p = primitiveName(v) === 'int' ? 'long' : primitiveName(v)
  if (!node.primitives.includes(p)) {
    if (node.primitives.length === 0) node.order.push('p')
    node.primitives.push(p)
  }
}

function renderSchema(node: SchemaNode): DynamicValue {
  const parts: DynamicValue[] = []
  for (const o of node.order) {
    if (o === 'p') parts.push(...node.primitives)
    else if (o === 'bag') {
      const out: Bag = {}
      for (const [k, child] of node.bag!) out[k] = renderSchema(child)
      parts.push(out)
    } else parts.push({ '`indexer`': renderSchema(node.items!) })
  }
  if (parts.length === 0) return null
  return parts.length === 1 ? parts[0]! : parts
}

const buildschema = defineAggregate({
  name: 'buildschema',
  params: ['dynamic'],
  output: (args) => one(prefixed('schema', args[0]), 'dynamic'),
  create: () => {
    const root = newNode()
    return {
      add(values) {
        absorb(root, (values[0] ?? null) as DynamicValue)
      },
      result: () => [renderSchema(root)],
    }
  },
})

// ---------------------------------------------------------------------------------------------
// The family
// ---------------------------------------------------------------------------------------------

export const aggregateFunctions: readonly AggregateFunction[] = [
  count,
  countif,
  sumAggregate('sum', false),
  sumAggregate('sumif', true),
  avgAggregate('avg', false),
  avgAggregate('avgif', true),
  extremeAggregate('min', -1, false),
  extremeAggregate('max', 1, false),
  extremeAggregate('minif', -1, true),
  extremeAggregate('maxif', 1, true),
  distinctCount('dcount', 'dcount', false, 2),
  distinctCount('dcountif', 'dcountif', true, 3),
  distinctCount('count_distinct', 'count_distinct', false, 1),
  distinctCount('count_distinctif', 'count_distinctif', true, 2),
  percentileAggregate('percentile', false, 'one'),
  percentileAggregate('percentiles', false, 'many'),
  percentileAggregate('percentiles_array', false, 'array'),
  percentileAggregate('percentilew', true, 'one'),
  percentileAggregate('percentilesw', true, 'many'),
  percentileAggregate('percentilesw_array', true, 'array', 'percentile'),
  listAggregate('make_list', { predicate: false, nulls: false }),
  listAggregate('makelist', { predicate: false, nulls: false, legacyLimit: true }),
  listAggregate('make_list_if', { predicate: true, nulls: false }),
  listAggregate('make_list_with_nulls', { predicate: false, nulls: true }),
  setAggregate('make_set', false),
  setAggregate('makeset', false, undefined, true),
  setAggregate('make_set_if', true),
  bagAggregate('make_bag', false),
  bagAggregate('make_dictionary', false, 'dictionary'),
  bagAggregate('make_bag_if', true),
  argExtreme('arg_max', 1, false),
  argExtreme('arg_min', -1, false),
  argExtreme('argmax', 1, true),
  argExtreme('argmin', -1, true),
  takeAny('take_any', 'take_any'),
  takeAny('any', 'any'),
  takeAny('take_anyif', 'take_anyif'),
  takeAny('anyif', 'anyif'),
  dispersion('stdev', 'stdev', false, false),
  dispersion('stdevif', 'stdev', false, true),
  dispersion('stdevp', 'stdev', true, false),
  dispersion('variance', 'variance', false, false),
  dispersion('varianceif', 'variance', false, true),
  dispersion('variancep', 'variance', true, false),
  dispersion('variancepif', 'variance', true, true),
  covariance('covariance', false, false),
  covariance('covarianceif', false, true),
  covariance('covariancep', true, false),
  covariance('covariancepif', true, true),
  bitwiseFold('binary_all_and', (a, b) => a & b),
  bitwiseFold('binary_all_or', (a, b) => a | b),
  bitwiseFold('binary_all_xor', (a, b) => a ^ b),
  buildschema,
]
