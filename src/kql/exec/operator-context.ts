/**
 * @module
 * What an operator's implementation needs from the run that evaluates it (issue 19 item 6: the
 * evaluator's operators live in several files around this contract). The evaluator's Executor
 * implements it; join-operators.ts, parse-operators.ts and aggregating-operators.ts take it as
 * their first argument.
 */
import type * as P from '../plan/plan.js'
import type { KqlType, KqlValue } from '../types.js'
import type { CompiledExpr, Row } from './rows.js'

/** The engine refuses intermediate results above this many rows (brief: memory safety). */
export const MAX_INTERMEDIATE_ROWS = 5_000_000

/** Row loops call `pulse()` every this many rows (abort signal, event loop). */
export const CHECK_EVERY = 4096

export interface OperatorContext {
  /** Runs a plan node (abort-checked, capped at MAX_INTERMEDIATE_ROWS). */
  run(node: P.PlanNode): Promise<Row[]>
  /** Compiles an expression whose subqueries `prepare` has evaluated. */
  compile(e: P.Expr): CompiledExpr
  /** Evaluates the subqueries (toscalar, in (T)) the expressions need, once per run. */
  prepare(exprs: readonly P.Expr[]): Promise<void>
  prepareOne(e: P.Expr): Promise<void>
  /** The value of a constant expression (after its subqueries). */
  constant(e: P.Expr): Promise<KqlValue>
  /** Honours the abort signal and lets timers fire; called every CHECK_EVERY rows. */
  pulse(): Promise<void>
  /** Throws the runtime error for an intermediate result above MAX_INTERMEDIATE_ROWS. */
  cap(count: number): void
}

/** The value a missing cell of a type takes: "" for strings (never null), else null. */
export function nullOf(type: KqlType): KqlValue {
  return type === 'string' ? '' : null
}
