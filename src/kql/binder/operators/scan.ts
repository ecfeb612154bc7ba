/**
 * @module
 * scan: the row-pattern operator. Each step's predicate and assignments see the combined row:
 * the record's columns and declared columns, then every step's state (`RowCtx.steps`).
 */
import { convertValue } from '../../functions/value-conversions.js'
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import type { KqlValue } from '../../types.js'
import { type BindContext, type RowCtx, stripHidden, visible } from '../bind-context.js'
import { didYouMean } from '../names.js'
import { bindPredicate } from './operator-input.js'

export function bindScan(b: BindContext, plan: P.PlanNode, op: A.ScanOp, ctx: RowCtx): P.ScanPattern {
  const input = visible(plan.columns)
  if (input.length !== plan.columns.length) plan = stripHidden(plan)
  const declared = op.declare.map((d) => {
    let defaultValue: KqlValue = d.type === 'string' ? '' : null
    if (d.defaultValue) {
      const v = b.bindScalar(d.defaultValue, { columns: [], scope: ctx.scope })
      if (v.kind !== 'Literal') throw b.err(d.defaultValue.start, 'a scan declare default must be a constant')
      defaultValue = convertValue(d.type, v.type, v.value)
    }
    if (input.some((c) => c.name === d.name)) throw b.err(d.start, `scan declares '${d.name}', which is already a column`)
    return { name: d.name, type: d.type, defaultValue }
  })
  const stepColumns: P.PlanColumn[] = [...input, ...declared.map((d) => ({ name: d.name, type: d.type }))]
  const width = stepColumns.length
  const steps = new Map<string, number>()
  op.steps.forEach((s, i) => {
    if (steps.has(s.name)) throw b.err(s.start, `duplicate scan step '${s.name}'`)
    steps.set(s.name, width + i * width)
  })
  // the combined row: [record columns + declared][step 0 state][step 1 state]...
  const rowCtx: RowCtx = {
    columns: [...stepColumns, ...op.steps.flatMap(() => stepColumns.map((c) => ({ ...c, hidden: true })))],
    scope: ctx.scope,
    steps,
    stepColumns,
  }
  const stepPlans: P.ScanStepPlan[] = op.steps.map((s) => {
    const predicate = bindPredicate(b, s.predicate, rowCtx, `scan step '${s.name}'`)
    const assignments = s.assignments.map((a) => {
      const index = declared.findIndex((d) => d.name === a.name)
      if (index < 0)
        throw b.err(
          a.start,
          `scan can only assign declared columns; '${a.name}' is not declared${didYouMean(
            a.name,
            declared.map((d) => d.name),
          )}`,
        )
      const expr = b.convertArgument(b.bindScalar(a.value, rowCtx), declared[index]!.type, a.start, `scan assignment to '${a.name}'`)
      return { index, expr }
    })
    return { name: s.name, output: s.output ?? 'all', predicate, assignments }
  })
  const matchParam = op.params.find((p) => p.name === 'with_match_id')
  const columns: P.PlanColumn[] = [...stepColumns]
  if (matchParam) columns.push({ name: String(matchParam.value), type: 'long' })
  return { kind: 'ScanPattern', columns, input: plan, declared, steps: stepPlans, withMatchId: matchParam !== undefined }
}
