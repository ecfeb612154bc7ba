/**
 * @module
 * mv-expand, mv-apply and partition: mv-expand turns array or bag elements into rows; mv-apply and
 * partition run a subquery whose leaf is `ApplyInput` (one row's items, one partition's rows).
 */
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import type { KqlType } from '../../types.js'
import { type BindContext, type RowCtx, withoutHidden } from '../bind-context.js'
import { Scope, type TabularValue } from '../scope.js'
import { constantCount, type OperatorInput } from './operator-input.js'

function bagExpansion(b: BindContext, params: readonly A.OperatorParam[]): 'bag' | 'array' {
  let mode: 'bag' | 'array' = 'bag'
  for (const p of params) {
    if (p.name === 'bagexpansion' || p.name === 'kind') {
      if (p.value !== 'bag' && p.value !== 'array') throw b.err(p.valueStart, `${p.name} must be 'bag' or 'array'`)
      mode = p.value
    }
  }
  return mode
}

export function bindMvExpand(b: BindContext, plan: P.PlanNode, op: A.MvExpandOp, ctx: RowCtx): P.MvExpand {
  const columns: P.PlanColumn[] = [...plan.columns]
  const items: P.ExpandItem[] = []
  let n = 1
  for (const item of op.items) {
    const expr = b.bindScalar(item.expr, ctx)
    if (expr.type !== 'dynamic')
      throw b.err(item.expr.start, `mv-expand needs a dynamic array or bag, but '${b.src(item.expr).slice(0, 40)}' is ${expr.type}`)
    const type = item.toType ?? 'dynamic'
    let name = item.name ?? b.nameOf(item.expr, ctx)
    if (!name) {
      do name = `Column${n++}`
      while (columns.some((c) => c.name === name))
    }
    let output = columns.findIndex((c) => c.name === name)
    if (output >= 0) columns[output] = { name, type }
    else {
      output = columns.length
      columns.push({ name, type })
    }
    items.push({ expr, output, type })
  }
  let itemIndex: number | undefined
  const indexParam = op.params.find((p) => p.name === 'with_itemindex')
  if (indexParam) {
    const name = String(indexParam.value)
    itemIndex = columns.findIndex((c) => c.name === name)
    if (itemIndex >= 0) columns[itemIndex] = { name, type: 'long' }
    else {
      itemIndex = columns.length
      columns.push({ name, type: 'long' })
    }
  }
  const limit = op.limit ? constantCount(b, op.limit, ctx.scope, 'mv-expand limit') : undefined
  return { kind: 'MvExpand', columns, input: plan, items, bagExpansion: bagExpansion(b, op.params), itemIndex, limit }
}

export function bindMvApply(b: BindContext, plan: P.PlanNode, op: A.MvApplyOp, ctx: RowCtx): P.MvApply {
  // the sub-table: the row's columns, each item replacing its column or appended, then the index
  const subtableColumns = plan.columns.map((c, i) => (c.hidden ? -1 : i)).filter((i) => i >= 0)
  const subColumns: P.PlanColumn[] = subtableColumns.map((i) => plan.columns[i]!)
  const items: P.Expr[] = []
  const itemTypes: KqlType[] = []
  const itemOutputs: number[] = []
  const expandedInPlace = new Set<number>()
  let n = 1
  for (const item of op.items) {
    const expr = b.bindScalar(item.expr, ctx)
    if (expr.type !== 'dynamic')
      throw b.err(item.expr.start, `mv-apply needs a dynamic array or bag, but '${b.src(item.expr).slice(0, 40)}' is ${expr.type}`)
    const type = item.toType ?? 'dynamic'
    let name = item.name ?? b.nameOf(item.expr, ctx)
    if (!name) {
      do name = `Column${n++}`
      while (subColumns.some((c) => c.name === name))
    }
    let at = subColumns.findIndex((c) => c.name === name)
    if (at >= 0) {
      subColumns[at] = { name, type }
      if (at < subtableColumns.length) expandedInPlace.add(subtableColumns[at]!)
    } else {
      at = subColumns.length
      subColumns.push({ name, type })
    }
    items.push(expr)
    itemTypes.push(type)
    itemOutputs.push(at)
  }
  const indexParam = op.params.find((p) => p.name === 'with_itemindex')
  if (indexParam) {
    const name = String(indexParam.value)
    const at = subColumns.findIndex((c) => c.name === name)
    if (at >= 0) throw b.err(indexParam.valueStart, `mv-apply: with_itemindex names an existing column '${name}'`)
    subColumns.push({ name, type: 'long' })
  }
  const applyInput: P.ApplyInput = { kind: 'ApplyInput', columns: subColumns }
  let sub: TabularValue = { plan: applyInput }
  const subScope = new Scope(ctx.scope)
  for (const subOp of op.subquery) sub = b.bindOperator(sub, subOp, subScope)
  const subPlan = withoutHidden(sub.plan)
  const produced = new Set(subPlan.columns.map((c) => c.name))
  const keptColumns = subtableColumns.filter((i) => !expandedInPlace.has(i) && !produced.has(plan.columns[i]!.name))
  const columns: P.PlanColumn[] = [...keptColumns.map((i) => plan.columns[i]!), ...subPlan.columns]
  const limit = op.limit ? constantCount(b, op.limit, ctx.scope, 'mv-apply limit') : undefined
  return {
    kind: 'MvApply',
    columns,
    input: plan,
    items,
    itemTypes,
    subtableColumns,
    itemOutputs,
    bagExpansion: bagExpansion(b, op.params),
    withItemIndex: indexParam !== undefined,
    ...(limit !== undefined ? { limit } : {}),
    keptColumns,
    subquery: subPlan,
  }
}

export function bindPartition(b: BindContext, op: A.PartitionOp, at: OperatorInput): P.PlanNode {
  const { plan, scope } = at
  const base = withoutHidden(plan)
  const key = b.bindScalar(op.by, { columns: base.columns, scope })
  if (key.type === 'dynamic')
    throw b.err(op.by.start, 'partition needs a scalar key; convert the dynamic value with tostring() or tolong()')
  let sub: TabularValue = { plan: { kind: 'ApplyInput', columns: base.columns } }
  const subScope = new Scope(scope)
  for (const subOp of op.subquery) sub = b.bindOperator(sub, subOp, subScope)
  const subPlan = withoutHidden(sub.plan)
  return { kind: 'Partition', columns: subPlan.columns, input: base, key, subquery: subPlan }
}
