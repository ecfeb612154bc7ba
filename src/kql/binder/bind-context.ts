/**
 * @module
 * What the binder's parts share (issue 19 item 6): the row context expressions are bound against,
 * the schema discovery of data-dependent plugins, plan-building helpers, and `BindContext`, the
 * part of the binder (binder.ts) that the operator binders (operators/*.ts), the tabular sources
 * (sources.ts) and the plugin binders (plugins.ts) call back into.
 */
import type { Visualization } from '../engine-types.js'
import type { KqlError, KqlErrorKind } from '../kql-error.js'
import type * as P from '../plan/plan.js'
import type { KqlTable } from '../schema.js'
import type * as A from '../syntax/ast.js'
import type { KqlType, KqlValue } from '../types.js'
import type { FunctionLibrary } from './function-library.js'
import type { Binding, Scope, TabularValue } from './scope.js'

/** What a data-dependent plugin turned out to produce, keyed by the plugin call's offset. */
export type DiscoveredSchema =
  | { readonly kind: 'bag'; readonly slots: readonly P.PlanColumn[] }
  | { readonly kind: 'pivot'; readonly values: readonly KqlValue[] }

/** A plugin waiting for its input to be run: `input` produces the rows to look at. */
export type PendingDiscovery =
  | { readonly kind: 'bag'; readonly key: number; readonly input: P.PlanNode; readonly bag: P.Expr; readonly ignored: readonly string[] }
  | { readonly kind: 'pivot'; readonly key: number; readonly input: P.PlanNode; readonly pivot: P.Expr }

/** The row an expression is bound against: its columns, names in scope, and the operator state. */
export interface RowCtx {
  readonly columns: readonly P.PlanColumn[]
  readonly scope: Scope
  /** Set while binding summarize/make-series aggregate expressions. */
  readonly agg?: AggCollector
  /** scan: step name → offset of that step's state in the combined row. */
  readonly steps?: ReadonlyMap<string, number>
  /** scan: the columns of one step's state (input columns, then declared columns). */
  readonly stepColumns?: readonly P.PlanColumn[]
}

/** Where summarize/make-series collect the aggregate calls met inside their expressions. */
export interface AggCollector {
  readonly input: RowCtx
  /** Output position of the first aggregate (after the group keys). */
  readonly base: number
  readonly calls: P.AggregateCall[]
  width: number
}

/** The binder as its parts see it: errors with positions, scalar binding, names, the library. */
export interface BindContext {
  err(offset: number, detail: string, kind?: KqlErrorKind): KqlError
  bindScalar(e: A.Expr, ctx: RowCtx): P.Expr
  nameOf(e: A.Expr, ctx: RowCtx): string | undefined
  readonly lib: FunctionLibrary
  /** Schemas found by running a plugin's input, keyed by the plugin call's offset. */
  readonly discovered: ReadonlyMap<number, DiscoveredSchema>
  /** Plugins whose output schema needs their input run first. */
  readonly pending: PendingDiscovery[]
  /** Workspace tables by name. */
  readonly tables: ReadonlyMap<string, KqlTable>
  /** `set query_bin_auto_size=...` / `set query_bin_auto_at=...`: what bin_auto() reads. */
  readonly binAuto: { size?: A.Expr; at?: A.Expr }
  /** Re-throws a library error that has no position with the call site's position. */
  rethrowAt(error: unknown, offset: number): never
  /** The query text of a node. */
  src(node: A.Span): string
  classify(e: A.Expr, scope: Scope, row?: RowCtx): 'tabular' | 'scalar'
  bindTabular(e: A.Expr, scope: Scope): TabularValue
  /** A table by name: a tabular let, a function called without arguments, or a workspace table. */
  bindTableName(name: string, offset: number, scope: Scope): TabularValue
  /** A call of a user-defined function (let f = (...) {...}). */
  invoke(
    fn: Extract<Binding, { kind: 'function' }>,
    args: readonly CallArg[],
    callSite: A.Span,
    caller: RowCtx | undefined,
    callerScope: Scope,
  ): AnyValue
  convertArgument(e: P.Expr, to: KqlType, offset: number, what: string): P.Expr
  /** One tabular operator applied to its input (operators.ts: the table from kind to binder). */
  bindOperator(input: TabularValue, op: A.Operator, scope: Scope): TabularValue
  /** A fresh id for a subtree evaluated once per run (materialize(), `as hint.materialized=true`). */
  nextMaterializeId(): number
  /** `render`: the visualization hint the query returns. */
  setVisualization(visualization: Visualization): void
}

/** What a name or a user function call binds to. */
export type AnyValue = { readonly kind: 'scalar'; readonly expr: P.Expr } | { readonly kind: 'tabular'; readonly value: TabularValue }

/** An argument of a user function call: an expression, or a table already bound (`T | invoke f()`). */
export type CallArg = A.Expr | { readonly kind: 'BoundTable'; readonly value: TabularValue; readonly start: number; readonly end: number }

/** The columns a query shows (hidden ones, `_rowid` and `_ingested_at`, left out). */
export function visible(columns: readonly P.PlanColumn[]): P.PlanColumn[] {
  return columns.filter((c) => !c.hidden)
}

export function ref(index: number, column: P.PlanColumn): P.ColumnRef {
  return { kind: 'ColumnRef', index, name: column.name, type: column.type }
}

export function literal(type: KqlType, value: KqlValue): P.Literal {
  return { kind: 'Literal', type, value }
}

/**
 * Sets the column `name` to `type` where it is (an operator's output replaces an input column of
 * that name) or appends it; returns its index.
 */
export function putColumn(columns: P.PlanColumn[], name: string, type: KqlType): number {
  const at = columns.findIndex((c) => c.name === name)
  if (at >= 0) {
    columns[at] = { name, type }
    return at
  }
  columns.push({ name, type })
  return columns.length - 1
}

/** The plan with its hidden columns (`_rowid`, `_ingested_at`) projected away. */
export function stripHidden(plan: P.PlanNode): P.PlanNode {
  const columns: P.PlanColumn[] = []
  const exprs: P.Expr[] = []
  plan.columns.forEach((c, i) => {
    if (!c.hidden) {
      columns.push(c)
      exprs.push(ref(i, c))
    }
  })
  return { kind: 'Project', columns, input: plan, exprs }
}

/** The plan itself when it has no hidden column, else `stripHidden(plan)`. */
export function withoutHidden(plan: P.PlanNode): P.PlanNode {
  return plan.columns.some((c) => c.hidden) ? stripHidden(plan) : plan
}

/** The columns at `indexes`, in that order; a hidden column named explicitly becomes visible. */
export function selectColumns(plan: P.PlanNode, indexes: readonly number[]): P.Project {
  return {
    kind: 'Project',
    columns: indexes.map((i) => unhide(plan.columns[i]!)),
    input: plan,
    exprs: indexes.map((i) => ref(i, plan.columns[i]!)),
  }
}

function unhide(c: P.PlanColumn): P.PlanColumn {
  return c.hidden ? { name: c.name, type: c.type } : c
}
