/**
 * @module
 * mv-expand, mv-apply and partition: mv-expand turns array or bag elements into rows; mv-apply and
 * partition run a subquery whose leaf is `ApplyInput` (one row's items, one partition's rows).
 */
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import { type BindContext, putColumn, type RowCtx, withoutHidden } from '../bind-context.js'
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

/**
 * The items of mv-expand or mv-apply: each a dynamic expression whose elements go into the column
 * it names (replacing a column of that name in `columns`, else appended; unnamed: `ColumnN`).
 */
function bindExpandItems(
  b: BindContext,
  what: 'mv-expand' | 'mv-apply',
  items: readonly A.MvExpandItem[],
  ctx: RowCtx,
  columns: P.PlanColumn[],
): P.ExpandItem[] {
  let n = 1
  return items.map((item) => {
    const expr = b.bindScalar(item.expr, ctx)
    if (expr.type !== 'dynamic')
      throw b.err(item.expr.start, `${what} needs a dynamic array or bag, but '${b.src(item.expr).slice(0, 40)}' is ${expr.type}`)
    const type = item.toType ?? 'dynamic'
    let name = item.name ?? b.nameOf(item.expr, ctx)
    if (!name) {
      do name = `Column${n++}`
      while (columns.some((c) => c.name === name))
    }
    return { expr, output: putColumn(columns, name, type), type }
  })
}

export function bindMvExpand(b: BindContext, plan: P.PlanNode, op: A.MvExpandOp, ctx: RowCtx): P.MvExpand {
  const columns: P.PlanColumn[] = [...plan.columns]
  const items = bindExpandItems(b, 'mv-expand', op.items, ctx, columns)
  const indexParam = op.params.find((p) => p.name === 'with_itemindex')
  const itemIndex = indexParam ? putColumn(columns, String(indexParam.value), 'long') : undefined
  const limit = op.limit ? constantCount(b, op.limit, ctx.scope, 'mv-expand limit') : undefined
  return { kind: 'MvExpand', columns, input: plan, items, bagExpansion: bagExpansion(b, op.params), itemIndex, limit }
}

export function bindMvApply(b: BindContext, plan: P.PlanNode, op: A.MvApplyOp, ctx: RowCtx): P.MvApply {
  // the sub-table: the row's columns, each item replacing its column or appended, then the index
  const subtableColumns = plan.columns.map((c, i) => (c.hidden ? -1 : i)).filter((i) => i >= 0)
  const subColumns: P.PlanColumn[] = subtableColumns.map((i) => plan.columns[i]!)
  const expanded = bindExpandItems(b, 'mv-apply', op.items, ctx, subColumns)
  // an item written into one of the row's own columns replaces it in the output
  const expandedInPlace = new Set(expanded.filter((x) => x.output < subtableColumns.length).map((x) => subtableColumns[x.output]!))
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
    items: expanded.map((x) => x.expr),
    itemTypes: expanded.map((x) => x.type),
    subtableColumns,
    itemOutputs: expanded.map((x) => x.output),
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
