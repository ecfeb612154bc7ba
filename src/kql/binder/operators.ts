/**
 * @module
 * The tabular operators: one table from operator kind to its binder (issue 19 item 6). The binders
 * live in operators/*.ts by family; each gets the binder's shared context (bind-context.ts) and
 * its input (`OperatorInput`), and returns a plan node (the input's name is kept) or a table.
 */
import type * as P from '../plan/plan.js'
import type * as A from '../syntax/ast.js'
import type { BindContext } from './bind-context.js'
import { bindAs, bindGetSchema, bindInvoke, bindRender } from './operators/as-invoke-render.js'
import { bindMvApply, bindMvExpand, bindPartition } from './operators/expand-apply.js'
import {
  bindDistinct,
  bindExtend,
  bindProject,
  bindProjectAway,
  bindProjectByNames,
  bindProjectKeep,
  bindProjectRename,
  bindProjectReorder,
  bindSerialize,
  bindWhere,
} from './operators/filter-project.js'
import { bindJoin, bindUnion } from './operators/join-union.js'
import { bindMakeSeries } from './operators/make-series.js'
import { bindSortKeys, constantCount, type OperatorBinder, type OperatorInput } from './operators/operator-input.js'
import { bindParse, bindParseKv } from './operators/parse.js'
import { bindScan } from './operators/scan.js'
import { bindSampleDistinct, bindTop } from './operators/sort-top.js'
import { bindSummarize, bindTopHitters, bindTopNested } from './operators/summarize.js'
import { bindEvaluate } from './plugins.js'
import type { Scope, TabularValue } from './scope.js'

const OPERATOR_BINDERS: { readonly [K in A.Operator['kind']]: OperatorBinder<K> } = {
  Where: bindWhere,
  Project: (b, op, { plan, ctx }) => bindProject(b, plan, op.items, ctx),
  Extend: (b, op, { plan, ctx }) => bindExtend(b, plan, op.items, ctx),
  ProjectAway: bindProjectAway,
  ProjectKeep: bindProjectKeep,
  ProjectRename: bindProjectRename,
  ProjectReorder: bindProjectReorder,
  ProjectByNames: bindProjectByNames,
  Distinct: bindDistinct,
  Serialize: bindSerialize,
  Summarize: (b, op, { plan, ctx }) => bindSummarize(b, plan, op, ctx),
  Count: (_b, op, { plan }) => ({ kind: 'Count', columns: [{ name: op.name ?? 'Count', type: 'long' }], input: plan }),
  TopNested: (b, op, { plan, ctx }) => bindTopNested(b, plan, op, ctx),
  TopHitters: bindTopHitters,
  MakeSeries: (b, op, { plan, ctx }) => bindMakeSeries(b, plan, op, ctx),
  Top: bindTop,
  Take: (b, op, { plan, scope }) => ({
    kind: 'Take',
    columns: plan.columns,
    input: plan,
    count: constantCount(b, op.count, scope, 'take', plan.columns),
  }),
  Sort: (b, op, { plan, ctx }) => ({ kind: 'Sort', columns: plan.columns, input: plan, keys: bindSortKeys(b, op.by, ctx) }),
  Sample: (b, op, { plan, scope }) => ({
    kind: 'Sample',
    columns: plan.columns,
    input: plan,
    count: constantCount(b, op.count, scope, 'sample'),
  }),
  SampleDistinct: bindSampleDistinct,
  Join: (b, op, { plan, scope }) => bindJoin(b, plan, op, scope),
  Lookup: (b, op, { plan, scope }) => bindJoin(b, plan, op, scope),
  UnionOp: (b, op, { input, scope }) => bindUnion(b, input, op.params, op.tables, scope),
  MvExpand: (b, op, { plan, ctx }) => bindMvExpand(b, plan, op, ctx),
  MvApply: (b, op, { plan, ctx }) => bindMvApply(b, plan, op, ctx),
  Partition: bindPartition,
  Parse: (b, op, { plan, ctx }) => bindParse(b, plan, op, ctx),
  ParseKv: (b, op, { plan, ctx }) => bindParseKv(b, plan, op, ctx),
  Scan: (b, op, { plan, ctx }) => bindScan(b, plan, op, ctx),
  As: bindAs,
  Invoke: bindInvoke,
  GetSchema: bindGetSchema,
  Render: (b, op, { input, scope }) => {
    b.setVisualization(bindRender(b, op, scope))
    return input
  },
  Consume: (_b, _op, { plan }) => ({
    plan: { kind: 'Take', columns: [], input: { kind: 'Project', columns: [], input: plan, exprs: [] }, count: 0 },
  }),
  Evaluate: (b, op, { plan, ctx }) => bindEvaluate(b, plan, op, ctx),
}

/** Binds one tabular operator over its input (`T | op`). */
export function bindOperator(b: BindContext, input: TabularValue, op: A.Operator, scope: Scope): TabularValue {
  const at: OperatorInput = { input, plan: input.plan, ctx: { columns: input.plan.columns, scope }, scope }
  const bind = OPERATOR_BINDERS[op.kind] as (b: BindContext, op: A.Operator, at: OperatorInput) => P.PlanNode | TabularValue
  const bound = bind(b, op, at)
  return 'kind' in bound ? { plan: bound, name: input.name } : bound
}
