/**
 * @module
 * sort, top, take, sample and sample-distinct: the operators that order or cut rows.
 */
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import type { BindContext } from '../bind-context.js'
import { bindSortKeys, constantCount, type OperatorInput } from './operator-input.js'

export function bindTop(b: BindContext, op: A.TopOp, at: OperatorInput): P.PlanNode {
  const { plan, ctx, scope } = at
  const count = constantCount(b, op.count, scope, 'top', plan.columns)
  return { kind: 'Top', columns: plan.columns, input: plan, count, keys: bindSortKeys(b, op.by, ctx) }
}

export function bindSampleDistinct(b: BindContext, op: A.SampleDistinctOp, at: OperatorInput): P.PlanNode {
  const { plan, ctx, scope } = at
  const expr = b.bindScalar(op.column, ctx)
  const name = b.nameOf(op.column, ctx) ?? 'Column1'
  return {
    kind: 'SampleDistinct',
    columns: [{ name, type: expr.type }],
    input: plan,
    count: constantCount(b, op.count, scope, 'sample-distinct'),
    expr,
  }
}
