/**
 * @module
 * The binder: resolves the names and KQL types of a parsed query against the workspace schema,
 * `let` statements and user-defined functions, and produces the relational plan (../plan/plan.ts).
 * This file binds statements, lets, user-function calls and tabular expressions; the tabular
 * operators are bound through operators.ts (one binder per operator kind, by family in
 * operators/), datatable/print/range by sources.ts, scalar expressions by scalar-expressions.ts,
 * all against the shared `BindContext` (bind-context.ts) that this class implements.
 *
 * Unknown names are semantic errors with a "did you mean" suggestion; Kusto features this engine
 * lacks are KqlError('unsupported') naming the feature. Every error carries line and column.
 */
import type { Visualization } from '../engine-types.js'
import { KqlError, type KqlErrorKind, positionAt } from '../kql-error.js'
import type * as P from '../plan/plan.js'
import { tablesRead } from '../plan/plan-walk.js'
import type { KqlSchema, KqlTable } from '../schema.js'
import type * as A from '../syntax/ast.js'
import { isNumericType, type KqlType } from '../types.js'
import {
  type AnyValue,
  type BindContext,
  type CallArg,
  type DiscoveredSchema,
  literal,
  type PendingDiscovery,
  type RowCtx,
  withoutHidden,
} from './bind-context.js'
import { DEFAULT_LIBRARY, type FunctionLibrary } from './function-library.js'
import { didYouMean, resultName } from './names.js'
import { bindUnion } from './operators/join-union.js'
import { constantOf } from './operators/operator-input.js'
import { bindOperator } from './operators.js'
import { bindScalar, convert, refuseIfUnsupported } from './scalar-expressions.js'
import { type Binding, Scope, type TabularValue } from './scope.js'
import { bindDatatable, bindPrint, bindRange } from './sources.js'

export interface BoundQuery {
  /** The result plan (hidden columns already removed). */
  readonly plan: P.PlanNode
  /** Workspace tables read, by KQL name, in first-reference order. */
  readonly tables: readonly string[]
  readonly visualization?: Visualization
  /**
   * Plugins whose output columns depend on the data (bag_unpack without a schema, pivot): the
   * plan holds placeholders until their inputs have been run and the query is bound again with
   * what was found (see compile-query.ts).
   */
  readonly pending: readonly PendingDiscovery[]
}

/** Binds a parsed script. MUST throw only KqlError. */
export function bindScript(
  script: A.Script,
  text: string,
  schema: KqlSchema,
  library: FunctionLibrary = DEFAULT_LIBRARY,
  discovered: ReadonlyMap<number, DiscoveredSchema> = new Map(),
): BoundQuery {
  return new Binder(text, schema, library, discovered).bindScript(script)
}

function containsColumnRef(e: P.Expr): boolean {
  switch (e.kind) {
    case 'ColumnRef':
    case 'Window':
      return true
    case 'Literal':
    case 'ScalarSubquery':
      return false
    case 'Call':
      return e.args.some(containsColumnRef)
    case 'Binary':
      return containsColumnRef(e.left) || containsColumnRef(e.right)
    case 'Unary':
    case 'Convert':
      return containsColumnRef(e.operand)
    case 'InList':
      return containsColumnRef(e.operand) || e.items.some(containsColumnRef)
    case 'InSubquery':
      return containsColumnRef(e.operand)
    case 'Between':
      return containsColumnRef(e.operand) || containsColumnRef(e.low) || containsColumnRef(e.high)
    case 'Member':
      return containsColumnRef(e.target) || containsColumnRef(e.key)
    case 'Pack':
      return e.entries.some((x) => containsColumnRef(x.value))
  }
}

class Binder implements BindContext {
  readonly tables: ReadonlyMap<string, KqlTable>
  private visualization: Visualization | undefined
  private readonly activeFunctions = new Set<A.Lambda>()
  private materializeIds = 0
  /** `set query_bin_auto_size=...` / `set query_bin_auto_at=...`: what bin_auto() reads. */
  readonly binAuto: { size?: A.Expr; at?: A.Expr } = {}

  readonly pending: PendingDiscovery[] = []

  constructor(
    private readonly text: string,
    schema: KqlSchema,
    readonly lib: FunctionLibrary,
    readonly discovered: ReadonlyMap<number, DiscoveredSchema>,
  ) {
    this.tables = new Map(schema.tables.map((t) => [t.name, t]))
  }

  // -------------------------------------------------------------------------------------------
  // Errors
  // -------------------------------------------------------------------------------------------

  err(offset: number, detail: string, kind: KqlErrorKind = 'semantic'): KqlError {
    return new KqlError(kind, detail, positionAt(this.text, offset))
  }

  /** Re-throws a library error that has no position with the call site's position. */
  rethrowAt(error: unknown, offset: number): never {
    if (error instanceof KqlError) {
      if (error.position) throw error
      throw new KqlError(error.kind, error.message, positionAt(this.text, offset))
    }
    const message = error instanceof Error ? error.message : String(error)
    throw new KqlError('semantic', message, positionAt(this.text, offset))
  }

  src(node: A.Span): string {
    return this.text.slice(node.start, node.end)
  }

  // -------------------------------------------------------------------------------------------
  // Statements
  // -------------------------------------------------------------------------------------------

  bindScript(script: A.Script): BoundQuery {
    const scope = new Scope()
    let result: TabularValue | undefined
    for (const st of script.statements) {
      switch (st.kind) {
        case 'Let':
          this.bindLet(st, scope, undefined)
          break
        case 'Pattern':
          scope.set(st.name, { kind: 'pattern', statement: st, scope })
          break
        case 'Set':
          if (st.name === 'query_bin_auto_size' && st.value) this.binAuto.size = st.value
          if (st.name === 'query_bin_auto_at' && st.value) this.binAuto.at = st.value
          break
        case 'DeclareParameters':
          for (const p of st.params) {
            if (p.type.kind === 'tabular') throw this.err(p.start, 'tabular query parameters are not supported', 'unsupported')
            if (p.defaultValue) {
              const e = this.bindScalar(p.defaultValue, { columns: [], scope })
              scope.set(p.name, { kind: 'scalar', expr: convert(e, p.type.type, p.defaultValue.start) })
            } else {
              scope.set(p.name, { kind: 'unset-parameter', type: p.type.type })
            }
          }
          break
        case 'Query': {
          if (this.classify(st.expr, scope) === 'scalar') {
            throw this.err(
              st.expr.start,
              `the query must end with a tabular expression; '${this.src(st.expr).slice(0, 40)}' is a scalar (use print to show a value)`,
            )
          }
          result = this.bindTabular(st.expr, scope)
          break
        }
      }
    }
    if (!result) {
      const last = script.statements[script.statements.length - 1]
      throw this.err(
        last?.end ?? 0,
        'the query has no tabular expression to return: expected a table, a pipeline or print after the let statements',
      )
    }
    const plan = withoutHidden(result.plan)
    // only what the result depends on counts: an unused let of a table reads nothing
    return { plan, tables: tablesRead(plan), visualization: this.visualization, pending: this.pending }
  }

  private bindLet(st: A.LetStatement, scope: Scope, row: RowCtx | undefined): void {
    if (st.value.kind === 'Lambda') {
      scope.set(st.name, { kind: 'function', lambda: st.value, scope, name: st.name })
      return
    }
    const value = st.value
    if (this.classify(value, scope, row) === 'tabular') {
      const v = this.bindTabular(value, scope)
      scope.set(st.name, { kind: 'tabular', value: { plan: v.plan, name: st.name } })
      return
    }
    const ctx: RowCtx = row ? { ...row, scope } : { columns: [], scope }
    const expr = this.bindScalar(value, ctx)
    scope.set(st.name, { kind: 'scalar', expr, rowColumns: containsColumnRef(expr) ? ctx.columns : undefined })
  }

  /** `P("a").path`, `P("a").["path"]` or `P("a")` of a declared pattern: its parts, else undefined. */
  private patternInvocation(e: A.Expr, scope: Scope): { call: A.CallExpr; path: A.Expr | undefined; name: string } | undefined {
    const call = e.kind === 'Member' || e.kind === 'Index' ? e.target : e
    if (call.kind !== 'Call' || scope.get(call.name)?.kind !== 'pattern') return undefined
    if (e.kind === 'Member')
      return { call, path: { kind: 'Literal', type: 'string', value: e.name, start: e.start, end: e.end }, name: call.name }
    if (e.kind === 'Index') return { call, path: e.index, name: call.name }
    return { call, path: undefined, name: call.name }
  }

  /** The definition a pattern invocation selects, bound as a table (Kusto's "missing pattern" error otherwise). */
  private bindPattern(inv: { call: A.CallExpr; path: A.Expr | undefined; name: string }, scope: Scope): TabularValue {
    const b = scope.get(inv.name) as Extract<Binding, { kind: 'pattern' }>
    const st = b.statement
    const args = inv.call.args.map((a) => constantOf(this, a, scope))
    if (args.some((a) => typeof a !== 'string'))
      throw this.err(inv.call.start, `the arguments of pattern '${inv.name}' must be string constants`)
    const path = inv.path ? constantOf(this, inv.path, scope) : undefined
    if (inv.path && typeof path !== 'string') throw this.err(inv.path.start, `the path of pattern '${inv.name}' must be a string constant`)
    const shown = `${inv.name}(${args.map((a) => JSON.stringify(a)).join(', ')})${path !== undefined ? `.[${JSON.stringify(path)}]` : ''}`
    if (st.definitions && args.length !== st.params.length)
      throw this.err(
        inv.call.start,
        `pattern '${inv.name}' takes ${st.params.length} argument${st.params.length === 1 ? '' : 's'}, got ${args.length}`,
      )
    if (st.definitions && (path !== undefined) !== (st.pathName !== undefined))
      throw this.err(
        inv.call.start,
        st.pathName ? `pattern '${inv.name}' needs a path: ${inv.name}(...).${st.pathName}` : `pattern '${inv.name}' has no path`,
      )
    const def = st.definitions?.find((d) => d.path === path && d.args.length === args.length && d.args.every((v, i) => v === args[i]))
    if (!def)
      throw this.err(inv.call.start, `pattern invocation ${shown} has no definition (declare pattern ${inv.name} defines no such case)`)
    return this.bindTabular(def.body, b.scope)
  }

  /** Whether an expression denotes a table or a scalar (KQL's grammar does not say). */
  classify(e: A.Expr, scope: Scope, row?: RowCtx): 'tabular' | 'scalar' {
    if (this.patternInvocation(e, scope)) return 'tabular'
    switch (e.kind) {
      case 'Pipe':
      case 'Datatable':
      case 'Print':
      case 'Range':
      case 'Union':
        return 'tabular'
      case 'Paren':
        return this.classify(e.expr, scope, row)
      case 'Name': {
        if (row?.columns.some((c) => c.name === e.name)) return 'scalar'
        const b = scope.get(e.name)
        if (b) {
          if (b.kind === 'tabular') return 'tabular'
          if (b.kind === 'function') return this.classifyLambda(b.lambda, b.scope)
          return 'scalar'
        }
        return this.tables.has(e.name) || !row ? 'tabular' : 'scalar'
      }
      case 'Call': {
        const b = scope.get(e.name)
        if (b?.kind === 'function') return this.classifyLambda(b.lambda, b.scope)
        if (e.name === 'materialize' || e.name === 'table' || e.name === 'view') return 'tabular'
        return 'scalar'
      }
      default:
        return 'scalar'
    }
  }

  private classifyLambda(lambda: A.Lambda, scope: Scope): 'tabular' | 'scalar' {
    if (lambda.isView) return 'tabular'
    const inner = new Scope(scope)
    for (const p of lambda.params) {
      if (p.type.kind === 'tabular') inner.set(p.name, { kind: 'tabular', value: { plan: { kind: 'Values', columns: [], rows: [] } } })
      else inner.set(p.name, { kind: 'scalar', expr: literal(p.type.type, null) })
    }
    for (const st of lambda.body) {
      if (st.kind === 'Let') {
        if (st.value.kind === 'Lambda') inner.set(st.name, { kind: 'function', lambda: st.value, scope: inner, name: st.name })
        else if (this.classify(st.value, inner) === 'tabular')
          inner.set(st.name, { kind: 'tabular', value: { plan: { kind: 'Values', columns: [], rows: [] } } })
        else inner.set(st.name, { kind: 'scalar', expr: literal('dynamic', null) })
      }
    }
    const last = lambda.body[lambda.body.length - 1]
    if (last?.kind !== 'Query') return 'scalar'
    if (this.activeFunctions.has(lambda)) return 'scalar'
    this.activeFunctions.add(lambda)
    try {
      return this.classify(last.expr, inner, { columns: [], scope: inner })
    } finally {
      this.activeFunctions.delete(lambda)
    }
  }

  // -------------------------------------------------------------------------------------------
  // User-defined functions
  // -------------------------------------------------------------------------------------------

  /**
   * Which argument each parameter gets. Arguments are read in order: a positional one fills the
   * next parameter, a named one its own parameter and moves the position just past it, so a named
   * argument may be followed by positional ones (`f(a=1, 2)` gives b = 2), as the documentation's
   * "callers may name their arguments" and C#-style named arguments read.
   */
  private assignArguments(name: string, params: readonly A.Param[], args: readonly CallArg[], _callSite: A.Span): (CallArg | undefined)[] {
    const assigned: (CallArg | undefined)[] = params.map(() => undefined)
    let next = 0
    for (const a of args) {
      let at: number
      let value: CallArg
      if (a.kind === 'NamedArg') {
        at = params.findIndex((p) => p.name === a.name)
        if (at < 0)
          throw this.err(
            a.start,
            `${name}() has no parameter '${a.name}'${didYouMean(
              a.name,
              params.map((p) => p.name),
            )}`,
          )
        value = a.value
      } else {
        at = next
        value = a
        if (at >= params.length) {
          const afterNamed = args.some((x) => x.kind === 'NamedArg')
          throw this.err(
            a.start,
            afterNamed
              ? `${name}(): this positional argument follows the last parameter '${params[params.length - 1]!.name}'; name it, or put it first`
              : `${name}() expects at most ${params.length} argument${params.length === 1 ? '' : 's'}, got ${args.length}`,
          )
        }
      }
      if (assigned[at] !== undefined) {
        throw this.err(a.start, `${name}(): the parameter '${params[at]!.name}' is given twice`)
      }
      assigned[at] = value
      next = at + 1
    }
    return assigned
  }

  invoke(
    fn: Extract<Binding, { kind: 'function' }>,
    args: readonly CallArg[],
    callSite: A.Span,
    caller: RowCtx | undefined,
    callerScope: Scope,
  ): AnyValue {
    const lambda = fn.lambda
    if (this.activeFunctions.has(lambda))
      throw this.err(callSite.start, `recursive call of '${fn.name}': user-defined functions cannot call themselves`, 'unsupported')
    const bodyScope = new Scope(fn.scope)
    const assigned = this.assignArguments(fn.name, lambda.params, args, callSite)
    const rowCtx: RowCtx = caller ?? { columns: [], scope: callerScope }
    lambda.params.forEach((param, i) => {
      const arg: CallArg | undefined = assigned[i]
      if (param.type.kind === 'tabular') {
        if (!arg) throw this.err(callSite.start, `${fn.name}(): missing tabular argument '${param.name}'`)
        const value = arg.kind === 'BoundTable' ? arg.value : this.bindTabular(arg, callerScope)
        for (const col of param.type.columns) {
          const found = value.plan.columns.find((c) => c.name === col.name)
          if (!found) {
            throw this.err(
              arg.start,
              `${fn.name}(): the table passed as '${param.name}' has no column '${col.name}'${didYouMean(
                col.name,
                value.plan.columns.map((c) => c.name),
              )}`,
            )
          }
        }
        bodyScope.set(param.name, { kind: 'tabular', value })
        return
      }
      let expr: P.Expr
      if (!arg) {
        if (!param.defaultValue) throw this.err(callSite.start, `${fn.name}(): missing argument '${param.name}'`)
        expr = this.bindScalar(param.defaultValue, { columns: [], scope: fn.scope })
      } else if (arg.kind === 'BoundTable') {
        throw this.err(arg.start, `${fn.name}(): '${param.name}' expects a scalar, not a table`)
      } else {
        if (this.classify(arg, callerScope, rowCtx) === 'tabular') {
          throw this.err(arg.start, `${fn.name}(): '${param.name}' expects a ${param.type.type} value, not a table`)
        }
        expr = this.bindScalar(arg, rowCtx)
      }
      expr = this.convertArgument(expr, param.type.type, arg?.start ?? callSite.start, `${fn.name}(): argument '${param.name}'`)
      bodyScope.set(param.name, { kind: 'scalar', expr, rowColumns: containsColumnRef(expr) ? rowCtx.columns : undefined })
    })
    this.activeFunctions.add(lambda)
    try {
      const bodyRow: RowCtx = { ...rowCtx, scope: bodyScope }
      const statements = lambda.body
      for (let k = 0; k < statements.length - 1; k++) {
        const st = statements[k]!
        if (st.kind === 'Let') this.bindLet(st, bodyScope, bodyRow)
      }
      const last = statements[statements.length - 1]!
      if (last.kind !== 'Query') throw this.err(last.start, 'a function body must end with an expression')
      if (this.classify(last.expr, bodyScope, bodyRow) === 'tabular') {
        const v = this.bindTabular(last.expr, bodyScope)
        return { kind: 'tabular', value: { plan: v.plan, name: fn.name } }
      }
      return { kind: 'scalar', expr: this.bindScalar(last.expr, bodyRow) }
    } finally {
      this.activeFunctions.delete(lambda)
    }
  }

  /** Argument conversion for declared parameter types (numeric widening, dynamic to anything). */
  convertArgument(e: P.Expr, to: KqlType, offset: number, what: string): P.Expr {
    if (e.type === to) return e
    const ok =
      (isNumericType(e.type) && isNumericType(to)) ||
      e.type === 'dynamic' ||
      to === 'dynamic' ||
      (e.kind === 'Literal' && e.value === null) ||
      (to === 'string' && e.type === 'guid') ||
      (to === 'guid' && e.type === 'string')
    if (!ok) throw this.err(offset, `${what} must be ${to}, got ${e.type}`)
    return convert(e, to, offset)
  }

  // -------------------------------------------------------------------------------------------
  // Tabular expressions
  // -------------------------------------------------------------------------------------------

  bindTabular(e: A.Expr, scope: Scope): TabularValue {
    const pattern = this.patternInvocation(e, scope)
    if (pattern) return this.bindPattern(pattern, scope)
    switch (e.kind) {
      case 'Name':
        return this.bindTableName(e.name, e.start, scope)
      case 'Paren':
        return this.bindTabular(e.expr, scope)
      case 'Pipe': {
        const input = this.bindTabular(e.source, scope)
        return this.bindOperator(input, e.op, scope)
      }
      case 'Datatable':
        return { plan: bindDatatable(this, e, scope) }
      case 'Print':
        return { plan: bindPrint(this, e, scope) }
      case 'Range':
        return { plan: bindRange(this, e, scope) }
      case 'Union':
        return bindUnion(this, undefined, e.params, e.tables, scope)
      case 'Call': {
        const b = scope.get(e.name)
        if (b?.kind === 'function') {
          const v = this.invoke(b, e.args, e, undefined, scope)
          if (v.kind !== 'tabular') throw this.err(e.start, `${e.name}() returns a scalar; a table is expected here`)
          return v.value
        }
        if (e.name === 'materialize') {
          if (e.args.length !== 1) throw this.err(e.start, 'materialize() expects one tabular argument')
          const inner = this.bindTabular(e.args[0]!, scope)
          return {
            plan: { kind: 'Materialize', columns: inner.plan.columns, input: inner.plan, id: this.materializeIds++ },
            name: inner.name,
          }
        }
        if (e.name === 'table') {
          const arg = e.args[0]
          const name = arg ? constantOf(this, arg, scope) : undefined
          if (typeof name !== 'string') throw this.err(e.start, "table() expects the table name as a string constant: table('Name')")
          return this.bindTableName(name, arg!.start, scope)
        }
        if (e.name === 'view') throw this.err(e.start, "'view' can only define a function in a let statement")
        refuseIfUnsupported(this, e)
        throw this.err(e.start, `expected a tabular expression, found a call to the scalar function ${e.name}()`)
      }
      default:
        throw this.err(
          e.start,
          `expected a tabular expression (a table, a let name, datatable, print, range, union or a pipeline), found '${this.src(e).slice(0, 40)}'`,
        )
    }
  }

  bindTableName(name: string, offset: number, scope: Scope): TabularValue {
    const b = scope.get(name)
    if (b) {
      if (b.kind === 'tabular') return b.value
      if (b.kind === 'function') {
        const v = this.invoke(b, [], { start: offset, end: offset + name.length }, undefined, scope)
        if (v.kind !== 'tabular') throw this.err(offset, `'${name}' is a scalar function; a table is expected here`)
        return v.value
      }
      throw this.err(offset, `'${name}' is a scalar value; a table is expected here`)
    }
    const table = this.tables.get(name)
    if (!table) {
      const candidates = [...this.tables.keys(), ...scope.names()]
      throw this.err(offset, `unknown table '${name}'${didYouMean(name, candidates)}`)
    }
    const columns: P.PlanColumn[] = table.columns.map((c) => ({ name: c.name, type: c.type }))
    const hidden = (table.hiddenColumns ?? []).filter((h) => !columns.some((c) => c.name === h.name))
    for (const h of hidden) columns.push({ name: h.name, type: h.type, hidden: true })
    const sqlColumns = columns.map((c) => table.sqlColumns?.[c.name] ?? c.name)
    const scale = table.sqlScale
    const sqlScale = scale && columns.some((c) => (scale[c.name] ?? 1) !== 1) ? columns.map((c) => scale[c.name] ?? 1) : undefined
    return {
      plan: { kind: 'TableScan', columns, table: name, sqlName: table.sqlName, sqlColumns, ...(sqlScale ? { sqlScale } : {}) },
      name,
    }
  }

  /** One tabular operator over its input: operators.ts, a table from operator kind to binder. */
  bindOperator(input: TabularValue, op: A.Operator, scope: Scope): TabularValue {
    return bindOperator(this, input, op, scope)
  }

  nextMaterializeId(): number {
    return this.materializeIds++
  }

  setVisualization(visualization: Visualization): void {
    this.visualization = visualization
  }

  /** The column name an unnamed expression gets (a column keeps its name), or undefined. */
  nameOf(e: A.Expr, _ctx: RowCtx): string | undefined {
    return resultName(e)
  }

  /** Scalar expressions are bound by scalar-expressions.ts; the binder's parts call back through here. */
  bindScalar(e: A.Expr, ctx: RowCtx): P.Expr {
    return bindScalar(this, e, ctx)
  }
}
