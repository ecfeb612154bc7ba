/**
 * @module
 * make-series: aggregates per key into arrays over an axis of bins (aligned with `bin()`; `stop`
 * inclusive with `in range(...)`). Constant items repeat their value in every bin that has rows.
 */
import { convertValue } from '../../functions/value-conversions.js'
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import { isNumericType, type KqlValue } from '../../types.js'
import type { AggCollector, BindContext, RowCtx } from '../bind-context.js'
import { uniqueName } from '../names.js'
import { preAggregateMakeSeries } from './make-series-bins.js'

export function bindMakeSeries(b: BindContext, plan: P.PlanNode, op: A.MakeSeriesOp, ctx: RowCtx): P.MakeSeries {
  const scalarCtx: RowCtx = { columns: [], scope: ctx.scope }
  const keys: P.Expr[] = []
  const keyColumns: P.PlanColumn[] = []
  const taken = new Set<string>()
  let n = 1
  for (const item of op.by) {
    const expr = b.bindScalar(item.expr, ctx)
    let name = item.names[0] ?? b.nameOf(item.expr, ctx)
    if (!name) {
      do name = `Column${n++}`
      while (taken.has(name))
    }
    name = uniqueName(name, taken)
    taken.add(name)
    keys.push(expr)
    keyColumns.push({ name, type: expr.type })
  }
  const axis = b.bindScalar(op.on, ctx)
  if (axis.type !== 'datetime' && axis.type !== 'timespan' && !isNumericType(axis.type)) {
    throw b.err(op.on.start, `make-series needs a datetime, timespan or numeric axis, got ${axis.type}`)
  }
  const step = b.bindScalar(op.step, scalarCtx)
  const from = op.from ? b.bindScalar(op.from, scalarCtx) : undefined
  const to = op.to ? b.bindScalar(op.to, scalarCtx) : undefined
  const expectedStep = axis.type === 'datetime' || axis.type === 'timespan' ? 'timespan' : 'number'
  if ((expectedStep === 'timespan' && step.type !== 'timespan') || (expectedStep === 'number' && !isNumericType(step.type))) {
    throw b.err(
      op.step.start,
      `make-series step must be ${expectedStep === 'timespan' ? 'a timespan' : 'a number'} for a ${axis.type} axis, got ${step.type}`,
    )
  }
  const agg: AggCollector = { input: ctx, base: 0, calls: [], width: 0 }
  const actx: RowCtx = { ...ctx, agg }
  const aggregates: P.AggregateCall[] = []
  const defaults: KqlValue[] = []
  const aggColumns: P.PlanColumn[] = []
  for (const a of op.aggregates) {
    const e = a.item.expr
    const isAggregate = e.kind === 'Call' && b.lib.lookupAggregate(e.name) !== undefined
    if (!isAggregate) {
      // a constant column (`k = 5`): the same value in every bin that has rows, the default elsewhere
      const constant = b.bindScalar(e, scalarCtx)
      if (constant.kind !== 'Literal')
        throw b.err(
          e.start,
          `make-series expects an aggregation such as count() or avg(x), or a constant; '${b.src(e).slice(0, 40)}' is neither`,
        )
    }
    const aggregateExpr: A.Expr = isAggregate
      ? e
      : { kind: 'Call', name: 'take_any', nameEnd: e.start, args: [e], start: e.start, end: e.end }
    const before = agg.calls.length
    b.bindScalar(aggregateExpr, actx)
    const call = agg.calls[before]!
    if (call.outputs.length !== 1)
      throw b.err(e.start, `${call.name}() produces several columns and cannot be used in make-series`, 'unsupported')
    let name = a.item.names[0] ?? (isAggregate ? call.outputs[0]!.name : `Column${n++}`)
    name = uniqueName(name, taken)
    taken.add(name)
    aggregates.push({ ...call, outputs: [{ name, type: call.outputs[0]!.type }] })
    aggColumns.push({ name, type: 'dynamic' })
    let dv: KqlValue = 0
    if (a.defaultValue) {
      const d = b.bindScalar(a.defaultValue, scalarCtx)
      if (d.kind !== 'Literal') throw b.err(a.defaultValue.start, 'make-series default must be a constant')
      dv = d.value
    }
    const outType = call.outputs[0]!.type
    defaults.push(
      dv === null ? null : convertValue(outType, typeof dv === 'number' ? (Number.isInteger(dv) ? 'long' : 'real') : outType, dv),
    )
  }
  const axisName = uniqueName(b.nameOf(op.on, ctx) ?? 'Column1', taken)
  const columns: P.PlanColumn[] = [...keyColumns, ...aggColumns, { name: axisName, type: 'dynamic' }]
  const series: P.MakeSeries = {
    kind: 'MakeSeries',
    columns,
    input: plan,
    keys,
    aggregates,
    defaults,
    axis,
    from,
    to,
    step,
    aggregateOutputs: aggColumns.map((_, i) => keyColumns.length + i),
    axisOutput: columns.length - 1,
    nonEmpty: op.params.some((p) => p.name === 'kind' && p.value === 'nonempty'),
    ...(op.rangeSyntax ? { rangeSyntax: true } : {}),
  }
  const binCall: A.Expr = { kind: 'Call', name: 'bin', nameEnd: op.on.start, args: [op.on, op.step], start: op.on.start, end: op.on.end }
  return preAggregateMakeSeries(series, () => b.bindScalar(binCall, ctx)) ?? series
}
