/**
 * @module
 * The tabular sources that are not a table or a pipeline: datatable, print and range.
 */
import { convertValue } from '../functions/value-conversions.js'
import type * as P from '../plan/plan.js'
import type * as A from '../syntax/ast.js'
import { isNumericType, type KqlType, type KqlValue } from '../types.js'
import type { BindContext, RowCtx } from './bind-context.js'
import { uniqueName } from './names.js'
import { tupleColumns } from './operators/filter-project.js'
import { convert } from './scalar-expressions.js'
import type { Scope } from './scope.js'

export function bindDatatable(b: BindContext, e: A.DatatableExpr, scope: Scope): P.Values {
  if (e.columns.length === 0) throw b.err(e.start, 'datatable needs at least one column')
  const names = new Set<string>()
  for (const c of e.columns) {
    if (names.has(c.name)) throw b.err(c.start, `duplicate column '${c.name}' in datatable`)
    names.add(c.name)
  }
  const width = e.columns.length
  if (e.values.length % width !== 0) {
    throw b.err(
      e.end - 1,
      `datatable has ${e.values.length} values, which is not a multiple of its ${width} column${width === 1 ? '' : 's'}`,
    )
  }
  const rows: KqlValue[][] = []
  const ctx: RowCtx = { columns: [], scope }
  for (let i = 0; i < e.values.length; i += width) {
    const row: KqlValue[] = []
    for (let c = 0; c < width; c++) {
      const ast = e.values[i + c]!
      const col = e.columns[c]!
      const bound = b.bindScalar(ast, ctx)
      if (bound.kind !== 'Literal') throw b.err(ast.start, 'datatable values must be constants')
      if (
        bound.type !== col.type &&
        bound.value !== null &&
        !(isNumericType(bound.type) && isNumericType(col.type)) &&
        col.type !== 'dynamic' &&
        !(col.type === 'string' && bound.type === 'guid') &&
        !(col.type === 'guid' && bound.type === 'string')
      ) {
        throw b.err(ast.start, `datatable column '${col.name}' is ${col.type}, but the value is ${bound.type}`)
      }
      row.push(bound.type === col.type ? bound.value : convertValue(col.type, bound.type, bound.value))
    }
    rows.push(row)
  }
  return { kind: 'Values', columns: e.columns.map((c) => ({ name: c.name, type: c.type })), rows }
}

export function bindPrint(b: BindContext, e: A.PrintExpr, scope: Scope): P.Project {
  const input: P.Values = { kind: 'Values', columns: [], rows: [[]] }
  const ctx: RowCtx = { columns: [], scope }
  const columns: P.PlanColumn[] = []
  const exprs: P.Expr[] = []
  const taken = new Set<string>()
  e.items.forEach((item, i) => {
    const tuple = tupleColumns(b, item, ctx, true)
    if (tuple) {
      for (const part of tuple) {
        if (taken.has(part.name) && part.declared) throw b.err(item.start, `duplicate column '${part.name}' in print`)
        const name = uniqueName(part.name, taken)
        taken.add(name)
        columns.push({ name, type: part.type })
        exprs.push(part.expr)
      }
      return
    }
    if (item.names.length > 1) throw b.err(item.start, 'only a multi-column function can be assigned to several names')
    const expr = b.bindScalar(item.expr, ctx)
    let name = item.names[0] ?? `print_${i}`
    if (taken.has(name)) {
      if (item.names.length > 0) throw b.err(item.start, `duplicate column '${name}' in print`)
      name = uniqueName(name, taken)
    }
    taken.add(name)
    columns.push({ name, type: expr.type })
    exprs.push(expr)
  })
  return { kind: 'Project', columns, input, exprs }
}

export function bindRange(b: BindContext, e: A.RangeExpr, scope: Scope): P.Range {
  const ctx: RowCtx = { columns: [], scope }
  const from = b.bindScalar(e.from, ctx)
  const to = b.bindScalar(e.to, ctx)
  const step = b.bindScalar(e.step, ctx)
  let type: KqlType
  if (from.type === 'datetime') {
    if (to.type !== 'datetime' || step.type !== 'timespan')
      throw b.err(e.start, 'range over datetimes needs a datetime end and a timespan step')
    type = 'datetime'
  } else if (from.type === 'timespan') {
    if (to.type !== 'timespan' || step.type !== 'timespan') throw b.err(e.start, 'range over timespans needs a timespan end and step')
    type = 'timespan'
  } else if (isNumericType(from.type) && isNumericType(to.type) && isNumericType(step.type)) {
    type =
      from.type === 'real' ||
      to.type === 'real' ||
      step.type === 'real' ||
      from.type === 'decimal' ||
      to.type === 'decimal' ||
      step.type === 'decimal'
        ? 'real'
        : 'long'
  } else {
    throw b.err(e.start, `range needs numeric, datetime or timespan bounds, got ${from.type}, ${to.type} and ${step.type}`)
  }
  const conv = (x: P.Expr): P.Expr => (type === 'real' || type === 'long' ? convert(x, type, e.start) : x)
  return {
    kind: 'Range',
    columns: [{ name: e.column, type }],
    from: conv(from),
    to: conv(to),
    step: type === 'datetime' ? step : conv(step),
  }
}
