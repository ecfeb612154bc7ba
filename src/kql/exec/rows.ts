/**
 * @module
 * The types every part of the evaluator shares (issue 19 item 6: a leaf, so compile-expr.ts and
 * the operator compilers it calls do not import each other): positional rows, compiled
 * expressions, and what a compiled expression reads besides its row.
 */
import type { EvalContext } from '../functions/function-types.js'
import type * as P from '../plan/plan.js'
import type { KqlValue } from '../types.js'

export type Row = readonly KqlValue[]
/** A compiled expression: the row, its position, and all rows of the input (window functions). */
export type CompiledExpr = (row: Row, index: number, rows: readonly Row[]) => KqlValue

/** What a subquery expression evaluated to, computed before its node runs. */
export type SubqueryValue =
  | { readonly kind: 'scalar'; readonly value: KqlValue }
  | { readonly kind: 'rows'; readonly values: readonly KqlValue[] }

export interface ExprRuntime {
  readonly ctx: EvalContext
  readonly subqueries: ReadonlyMap<P.Expr, SubqueryValue>
}
