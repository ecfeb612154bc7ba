/**
 * @module
 * The aggregating KQL operators beyond summarize, over an OperatorContext (split out of
 * evaluator.ts, issue 19 item 6): make-series (bins aligned with bin(), default fill values),
 * top-nested and top-hitters.
 */

import { toDynamic } from '../functions/value-conversions.js'
import { KqlError } from '../kql-error.js'
import type * as P from '../plan/plan.js'
import type { DynamicValue, KqlValue } from '../types.js'
import { floorDiv } from '../values.js'
import { compositeKey } from './compile-expr.js'
import { CHECK_EVERY, nullOf, type OperatorContext } from './operator-context.js'
import type { Row } from './rows.js'
import { compareNonNull, keyOf } from './value-ops.js'

export async function makeSeries(ex: OperatorContext, node: P.MakeSeries): Promise<Row[]> {
  const rows = await ex.run(node.input)
  await ex.prepare([...node.keys, node.axis, ...node.aggregates.flatMap((a) => a.args)])
  const keyFns = node.keys.map((k) => ex.compile(k))
  const axisFn = ex.compile(node.axis)
  const aggArgs = node.aggregates.map((a) => a.args.map((x) => ex.compile(x)))
  const step = await ex.constant(node.step)
  const ticks = node.axis.type === 'datetime' || node.axis.type === 'timespan'
  if (step === null || (ticks ? (step as bigint) <= 0n : (step as number) <= 0))
    throw new KqlError('runtime', 'make-series: the step must be positive')
  const axisValues = rows.map((r, i) => axisFn(r, i, rows))
  let from = node.from ? await ex.constant(node.from) : undefined
  let to = node.to ? await ex.constant(node.to) : undefined
  if (node.rangeSyntax) {
    // in range(start, stop, step): bins aligned with bin(), stop inclusive
    const bin = (v: KqlValue): KqlValue =>
      v === null || v === undefined
        ? v
        : ticks
          ? floorDiv(v as bigint, step as bigint) * (step as bigint)
          : Math.floor((v as number) / (step as number)) * (step as number)
    from = bin(from ?? null)
    const last = bin(to ?? null)
    to = last === null ? null : ticks ? (last as bigint) + (step as bigint) : (last as number) + (step as number)
  }
  const present = axisValues.filter((v) => v !== null && v !== undefined) as (number | bigint)[]
  if (from === undefined || from === null) {
    if (present.length === 0) from = null
    else {
      const min = present.reduce((a, b) => (b < a ? b : a))
      from = ticks
        ? floorDiv(min as bigint, step as bigint) * (step as bigint)
        : Math.floor((min as number) / (step as number)) * (step as number)
    }
  }
  if (to === undefined || to === null) {
    if (present.length === 0 || from === null) to = null
    else {
      const max = present.reduce((a, b) => (b > a ? b : a))
      to = ticks ? (max as bigint) + 1n : (max as number) + Number.EPSILON * Math.max(1, Math.abs(max as number))
    }
  }
  let bins = 0
  if (from !== null && to !== null) {
    if (ticks) {
      const span = (to as bigint) - (from as bigint)
      bins = span <= 0n ? 0 : Number((span + (step as bigint) - 1n) / (step as bigint))
    } else {
      const span = (to as number) - (from as number)
      bins = span <= 0 ? 0 : Math.ceil(span / (step as number) - 1e-12)
    }
  }
  ex.cap(bins)
  interface Group {
    keys: KqlValue[]
    cells: (ReturnType<P.AggregateCall['impl']['create']> | undefined)[][]
  }
  const groups = new Map<unknown, Group>()
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!
    const a = axisValues[i]
    if (a === null || a === undefined || from === null) continue
    let bin: number
    if (ticks) bin = Number(floorDiv((a as bigint) - (from as bigint), step as bigint))
    else bin = Math.floor(((a as number) - (from as number)) / (step as number))
    if (bin < 0 || bin >= bins) continue
    const keys = keyFns.map((f) => f(r, i, rows))
    const k = compositeKey(keys)
    let g = groups.get(k)
    if (!g) {
      g = { keys, cells: node.aggregates.map(() => []) }
      groups.set(k, g)
    }
    node.aggregates.forEach((agg, j) => {
      const cells = g!.cells[j]!
      if (node.preAggregated) {
        const value = aggArgs[j]![0]!(r, i, rows)
        cells[bin] = { add() {}, result: () => [value] }
        return
      }
      let acc = cells[bin]
      if (!acc) {
        acc = agg.impl.create()
        cells[bin] = acc
      }
      const fns = aggArgs[j]!
      acc.add(fns.map((f) => f(r, i, rows)))
    })
    if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await ex.pulse()
  }
  if (groups.size === 0 && node.keys.length === 0 && node.nonEmpty) groups.set('', { keys: [], cells: node.aggregates.map(() => []) })
  const axisType = node.axis.type
  const axis: DynamicValue[] = []
  for (let b = 0; b < bins; b++) {
    const v = ticks ? (from as bigint) + BigInt(b) * (step as bigint) : (from as number) + b * (step as number)
    axis.push(toDynamic(axisType, v))
  }
  const out: Row[] = []
  for (const g of groups.values()) {
    const row: KqlValue[] = new Array(node.columns.length).fill(null)
    g.keys.forEach((v, i) => {
      row[i] = v
    })
    node.aggregates.forEach((agg, j) => {
      const outType = agg.outputs[0]!.type
      const series: DynamicValue[] = []
      for (let b = 0; b < bins; b++) {
        const acc = g.cells[j]![b]
        series.push(acc ? toDynamic(outType, acc.result()[0] ?? null) : toDynamic(outType, node.defaults[j] ?? null))
      }
      row[node.aggregateOutputs[j]!] = series
    })
    row[node.axisOutput] = axis
    out.push(row)
  }
  return out
}

export async function topNested(ex: OperatorContext, node: P.TopNested): Promise<Row[]> {
  const rows = await ex.run(node.input)
  await ex.prepare(node.levels.flatMap((l) => [l.key, ...l.aggregate.args]))
  const keyFns = node.levels.map((l) => ex.compile(l.key))
  const argFns = node.levels.map((l) => l.aggregate.args.map((a) => ex.compile(a)))
  const out: Row[] = []
  const recurse = (subset: number[], level: number, prefix: KqlValue[]): void => {
    if (level === node.levels.length) {
      out.push(prefix)
      return
    }
    const spec = node.levels[level]!
    const groups = new Map<unknown, { key: KqlValue; members: number[] }>()
    for (const i of subset) {
      const key = keyFns[level]!(rows[i]!, i, rows)
      const k = keyOf(key)
      let g = groups.get(k)
      if (!g) {
        g = { key, members: [] }
        groups.set(k, g)
      }
      g.members.push(i)
    }
    const aggregate = (members: number[]): KqlValue => {
      const acc = spec.aggregate.impl.create()
      for (const i of members) acc.add(argFns[level]!.map((f) => f(rows[i]!, i, rows)))
      return acc.result()[0] ?? null
    }
    const scored = [...groups.values()].map((g) => ({ ...g, value: aggregate(g.members) }))
    const aggType = spec.aggregate.outputs[0]!.type
    scored.sort((a, b) => {
      if (a.value === null || b.value === null) return a.value === null ? (b.value === null ? 0 : 1) : -1
      const c = compareNonNull(aggType, a.value, b.value)
      return spec.descending ? -c : c
    })
    const chosen = spec.count === undefined ? scored : scored.slice(0, spec.count)
    for (const g of chosen) recurse(g.members, level + 1, [...prefix, g.key, g.value])
    if (spec.others !== undefined && spec.count !== undefined && scored.length > spec.count) {
      const rest = scored.slice(spec.count).flatMap((g) => g.members)
      const tail: KqlValue[] = [...prefix, spec.others, aggregate(rest)]
      for (let l = level + 1; l < node.levels.length; l++) tail.push(nullOf(node.columns[l * 2]!.type), null)
      out.push(tail)
    }
  }
  recurse(
    rows.map((_, i) => i),
    0,
    [],
  )
  return out
}

export async function topHitters(ex: OperatorContext, node: P.TopHitters): Promise<Row[]> {
  const rows = await ex.run(node.input)
  await ex.prepareOne(node.expr)
  if (node.weight) await ex.prepareOne(node.weight)
  const f = ex.compile(node.expr)
  const w = node.weight ? ex.compile(node.weight) : undefined
  const counts = new Map<unknown, { value: KqlValue; n: number }>()
  rows.forEach((r, i) => {
    const v = f(r, i, rows)
    const k = keyOf(v)
    const e = counts.get(k) ?? { value: v, n: 0 }
    e.n += w ? Number(w(r, i, rows) ?? 0) : 1
    counts.set(k, e)
  })
  return [...counts.values()]
    .sort((a, b) => b.n - a.n)
    .slice(0, node.count)
    .map((e) => [e.value, e.n])
}
