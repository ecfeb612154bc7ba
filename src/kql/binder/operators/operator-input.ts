/**
 * @module
 * What every tabular operator binder receives (`OperatorInput`), and the argument readers several
 * operators share: constant row counts, predicates, sort keys, unknown-column errors.
 */
import type { KqlError } from '../../kql-error.js'
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import type { KqlValue } from '../../types.js'
import type { BindContext, RowCtx } from '../bind-context.js'
import { didYouMean } from '../names.js'
import { convert } from '../scalar-expressions.js'
import type { Scope, TabularValue } from '../scope.js'

/** An operator's input: the table piped into it, and the row context over its columns. */
export interface OperatorInput {
  readonly input: TabularValue
  /** `input.plan` */
  readonly plan: P.PlanNode
  /** The input's columns and the names in scope. */
  readonly ctx: RowCtx
  readonly scope: Scope
}

/**
 * Binds one operator kind. A plan node keeps the input's name (what `union withsource=` reports);
 * a `TabularValue` is returned as it is (as, invoke, render, union).
 */
export type OperatorBinder<K extends A.Operator['kind']> = (
  b: BindContext,
  op: Extract<A.Operator, { kind: K }>,
  at: OperatorInput,
) => P.PlanNode | TabularValue

export function unknownColumn(b: BindContext, name: string, offset: number, columns: readonly P.PlanColumn[]): KqlError {
  return b.err(
    offset,
    `unknown column '${name}'${didYouMean(
      name,
      columns.map((c) => c.name),
    )}`,
  )
}
/** A constant row count (take, top, sample): a non-negative integer. */
export function constantCount(b: BindContext, e: A.Expr, scope: Scope, what: string, columns: readonly P.PlanColumn[] = []): number {
  if (e.kind === 'Name' && columns.some((c) => c.name === e.name)) {
    throw b.err(e.start, `${what} expects a constant number of rows; '${e.name}' is a column`)
  }
  const bound = b.bindScalar(e, { columns: [], scope })
  if (bound.kind !== 'Literal' || typeof bound.value !== 'number' || !Number.isFinite(bound.value)) {
    throw b.err(e.start, `${what} expects a constant number of rows`)
  }
  if (bound.value < 0) throw b.err(e.start, `${what} expects a non-negative number of rows`)
  return Math.trunc(bound.value)
}
export function constantOf(b: BindContext, e: A.Expr, scope: Scope): KqlValue | undefined {
  const bound = b.bindScalar(e, { columns: [], scope })
  return bound.kind === 'Literal' ? bound.value : undefined
}
export function bindPredicate(b: BindContext, e: A.Expr, ctx: RowCtx, what: string): P.Expr {
  const p = b.bindScalar(e, ctx)
  if (p.type === 'bool') return p
  if (p.type === 'dynamic') return convert(p, 'bool', e.start)
  throw b.err(e.start, `${what} needs a bool predicate, but '${b.src(e).slice(0, 40)}' is ${p.type}`)
}
export function bindSortKeys(b: BindContext, items: readonly A.OrderItem[], ctx: RowCtx): P.SortKey[] {
  return items.map((it) => {
    const expr = b.bindScalar(it.expr, ctx)
    const descending = it.direction !== 'asc'
    return { expr, descending, nullsFirst: it.nulls ? it.nulls === 'first' : !descending }
  })
}
