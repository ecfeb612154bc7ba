/**
 * @module
 * summarize, count, top-nested and top-hitters: the operators that aggregate. Aggregate calls met
 * inside an item are collected by `AggCollector` (bind-context.ts) as scalar-expressions.ts binds it.
 */
import { convertValue } from '../../functions/value-conversions.js'
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import { isNumericType, type KqlValue } from '../../types.js'
import type { AggCollector, BindContext, RowCtx } from '../bind-context.js'
import { uniqueName } from '../names.js'
import { constantCount, type OperatorInput } from './operator-input.js'

export function bindSummarize(b: BindContext, plan: P.PlanNode, op: A.SummarizeOp, ctx: RowCtx): P.PlanNode {
  const keys: P.Expr[] = []
  const keyColumns: P.PlanColumn[] = []
  const taken = new Set<string>()
  let n = 1
  const nextDefault = (): string => {
    let name: string
    do name = `Column${n++}`
    while (taken.has(name))
    return name
  }
  for (const item of op.by) {
    if (item.names.length > 1) throw b.err(item.start, 'a group key has one name', 'syntax')
    const expr = b.bindScalar(item.expr, ctx)
    if (expr.type === 'dynamic')
      throw b.err(
        item.expr.start,
        `summarize cannot group by a dynamic value ('${b.src(item.expr).slice(0, 40)}'); convert it with tostring() or tolong()`,
      )
    let name = item.names[0] ?? b.nameOf(item.expr, ctx) ?? nextDefault()
    if (taken.has(name)) {
      if (item.names.length > 0) throw b.err(item.start, `duplicate column '${name}' in summarize`)
      name = uniqueName(name, taken)
    }
    taken.add(name)
    keys.push(expr)
    keyColumns.push({ name, type: expr.type })
  }
  const agg: AggCollector = { input: ctx, base: keys.length, calls: [], width: 0 }
  const actx: RowCtx = { ...ctx, agg }
  interface Item {
    item: A.NamedExpr
    expr: P.Expr
    direct?: P.AggregateCall
  }
  const items: Item[] = []
  for (const item of op.aggregates) {
    const callsBefore = agg.calls.length
    const widthBefore = agg.width
    const expr = b.bindScalar(item.expr, actx)
    if (agg.calls.length === callsBefore) {
      throw b.err(
        item.expr.start,
        `summarize expects aggregations such as count() or avg(x); '${b.src(item.expr).slice(0, 40)}' is not one`,
      )
    }
    const direct =
      item.expr.kind === 'Call' &&
      agg.calls.length === callsBefore + 1 &&
      expr.kind === 'ColumnRef' &&
      expr.index === agg.base + widthBefore
        ? agg.calls[callsBefore]
        : undefined
    items.push({ item, expr, direct })
  }
  // the Summarize node's own columns: keys, then every aggregate output
  const sumColumns: P.PlanColumn[] = [...keyColumns]
  const internal = new Set(taken)
  for (const call of agg.calls) {
    for (const o of call.outputs) {
      const name = uniqueName(o.name, internal)
      internal.add(name)
      sumColumns.push({ name, type: o.type })
    }
  }
  // the final columns, in item order
  const finalColumns: P.PlanColumn[] = [...keyColumns]
  const finalExprs: P.Expr[] = keyColumns.map((c, i) => ({ kind: 'ColumnRef', index: i, name: c.name, type: c.type }))
  const declared = new Set<string>(op.by.filter((b) => b.names.length > 0).map((b) => b.names[0]!))
  for (const { item, expr, direct } of items) {
    if (direct) {
      const start = agg.base + agg.calls.slice(0, agg.calls.indexOf(direct)).reduce((s, c) => s + c.outputs.length, 0)
      if (item.names.length > direct.outputs.length)
        throw b.err(item.start, `${direct.name}() produces ${direct.outputs.length} column(s), but ${item.names.length} names were given`)
      direct.outputs.forEach((o, k) => {
        const explicit = item.names[k]
        let name = explicit ?? o.name
        if (!explicit && direct.star && taken.has(name) && k > 0) return
        if (taken.has(name)) {
          if (explicit && declared.has(name)) throw b.err(item.start, `duplicate column '${name}' in summarize`)
          name = uniqueName(name, taken)
        }
        taken.add(name)
        if (explicit) declared.add(name)
        finalColumns.push({ name, type: o.type })
        finalExprs.push({ kind: 'ColumnRef', index: start + k, name, type: o.type })
      })
      continue
    }
    if (item.names.length > 1) throw b.err(item.start, 'naming several columns from one expression is not supported here', 'unsupported')
    let name = item.names[0] ?? b.nameOf(item.expr, ctx) ?? nextDefault()
    if (taken.has(name)) {
      if (item.names.length > 0 && declared.has(name)) throw b.err(item.start, `duplicate column '${name}' in summarize`)
      name = uniqueName(name, taken)
    }
    taken.add(name)
    finalColumns.push({ name, type: expr.type })
    finalExprs.push(expr)
  }
  const identity =
    finalExprs.length === sumColumns.length &&
    finalExprs.every((e, i) => e.kind === 'ColumnRef' && e.index === i && sumColumns[i]!.type === finalColumns[i]!.type)
  if (identity)
    return {
      kind: 'Summarize',
      columns: finalColumns,
      input: plan,
      keys,
      aggregates: renameOutputs(agg.calls, finalColumns.slice(keys.length)),
    }
  const summarize: P.Summarize = {
    kind: 'Summarize',
    columns: sumColumns,
    input: plan,
    keys,
    aggregates: renameOutputs(agg.calls, sumColumns.slice(keys.length)),
  }
  return { kind: 'Project', columns: finalColumns, input: summarize, exprs: finalExprs }
}

function renameOutputs(calls: readonly P.AggregateCall[], names: readonly P.PlanColumn[]): P.AggregateCall[] {
  let k = 0
  return calls.map((c) => ({ ...c, outputs: c.outputs.map(() => names[k++]!) }))
}

export function bindTopNested(b: BindContext, plan: P.PlanNode, op: A.TopNestedOp, ctx: RowCtx): P.TopNested {
  const columns: P.PlanColumn[] = []
  const taken = new Set<string>()
  const levels: P.TopNestedLevel[] = op.levels.map((level) => {
    const count = level.count ? constantCount(b, level.count, ctx.scope, 'top-nested') : undefined
    const key = b.bindScalar(level.of.expr, ctx)
    const keyName = uniqueName(level.of.names[0] ?? b.nameOf(level.of.expr, ctx) ?? `Column${columns.length + 1}`, taken)
    taken.add(keyName)
    columns.push({ name: keyName, type: key.type })
    const agg: AggCollector = { input: ctx, base: 0, calls: [], width: 0 }
    const byExpr = level.by.expr
    if (byExpr.kind !== 'Call' || !b.lib.lookupAggregate(byExpr.name)) {
      throw b.err(byExpr.start, `top-nested expects an aggregation after 'by'; '${b.src(byExpr).slice(0, 40)}' is not one`)
    }
    b.bindScalar(byExpr, { ...ctx, agg })
    const call = agg.calls[0]!
    const aggName = uniqueName(level.by.names[0] ?? `aggregated_${keyName}`, taken)
    taken.add(aggName)
    const aggType = call.outputs[0]!.type
    columns.push({ name: aggName, type: aggType })
    let others: KqlValue | undefined
    if (level.others) {
      const o = b.bindScalar(level.others.value, { columns: [], scope: ctx.scope })
      if (o.kind !== 'Literal') throw b.err(level.others.value.start, "top-nested 'with others' needs a constant")
      others = convertValue(key.type, o.type, o.value)
    }
    return {
      ...(count !== undefined ? { count } : {}),
      key,
      aggregate: { ...call, outputs: [{ name: aggName, type: aggType }] },
      descending: level.direction !== 'asc',
      ...(others !== undefined ? { others } : {}),
    }
  })
  return { kind: 'TopNested', columns, input: plan, levels }
}

export function bindTopHitters(b: BindContext, op: A.TopHittersOp, at: OperatorInput): P.PlanNode {
  const { plan, ctx, scope } = at
  const expr = b.bindScalar(op.of, ctx)
  const name = b.nameOf(op.of, ctx) ?? 'Column1'
  const weight = op.by ? b.bindScalar(op.by, ctx) : undefined
  if (weight && !isNumericType(weight.type)) throw b.err(op.by!.start, `top-hitters: the weight must be numeric, got ${weight.type}`)
  const countName = weight ? `approximate_sum_${b.nameOf(op.by!, ctx) ?? ''}` : `approximate_count_${name}`
  return {
    kind: 'TopHitters',
    columns: [
      { name, type: expr.type },
      { name: countName, type: weight ? (weight.type === 'real' || weight.type === 'decimal' ? 'real' : 'long') : 'long' },
    ],
    input: plan,
    count: constantCount(b, op.count, scope, 'top-hitters'),
    expr,
    weight,
  }
}
