/**
 * @module
 * The binder: resolves the names and KQL types of a parsed query against the workspace schema,
 * `let` statements and user-defined functions, and produces the relational plan (../plan/plan.ts).
 *
 * Unknown names are semantic errors with a "did you mean" suggestion; Kusto features this engine
 * lacks are KqlError('unsupported') naming the feature. Every error carries line and column.
 */
import type { Visualization } from '../engine-types.js'
import { arraySortOutputs } from '../functions/dynamic-functions.js'
import { compileRegex } from '../functions/regex.js'
import { multiColumnOutputs } from '../functions/series-functions.js'
import { convertValue } from '../functions/value-conversions.js'
import { KqlError, type KqlErrorKind, positionAt } from '../kql-error.js'
import type * as P from '../plan/plan.js'
import { tablesRead } from '../plan/plan-walk.js'
import type { KqlSchema, KqlTable } from '../schema.js'
import type * as A from '../syntax/ast.js'
import { type DynamicValue, isNumericType, type KqlType, type KqlValue } from '../types.js'
import {
  type AggCollector,
  type AnyValue,
  type CallArg,
  type DiscoveredSchema,
  literal,
  type PendingDiscovery,
  type RowCtx,
  ref,
  visible,
} from './bind-context.js'
import { DEFAULT_LIBRARY, type FunctionLibrary } from './function-library.js'
import { preAggregateMakeSeries } from './make-series-bins.js'
import { didYouMean, matchesPattern, resultName, uniqueName } from './names.js'
import { buildParseRegex } from './parse-pattern.js'
import { bindEvaluate } from './plugins.js'
import { argInfo, bindScalar, convert, fold, refuseIfUnsupported, toText } from './scalar-expressions.js'
import { type Binding, Scope, type TabularValue } from './scope.js'

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

/** A function argument already bound (invoke passes the piped table). */
const JOIN_KINDS = new Set<P.JoinKind>([
  'innerunique',
  'inner',
  'leftouter',
  'rightouter',
  'fullouter',
  'leftanti',
  'rightanti',
  'leftsemi',
  'rightsemi',
])
const JOIN_ALIASES: Readonly<Record<string, P.JoinKind>> = {
  anti: 'leftanti',
  leftantisemi: 'leftanti',
  rightantisemi: 'rightanti',
  semi: 'leftsemi',
}

const GETSCHEMA_TYPES: Readonly<Record<KqlType, string>> = {
  bool: 'System.SByte',
  int: 'System.Int32',
  long: 'System.Int64',
  real: 'System.Double',
  decimal: 'System.Data.SqlTypes.SqlDecimal',
  string: 'System.String',
  datetime: 'System.DateTime',
  timespan: 'System.TimeSpan',
  guid: 'System.Guid',
  dynamic: 'System.Object',
}

function unhide(c: P.PlanColumn): P.PlanColumn {
  return c.hidden ? { name: c.name, type: c.type } : c
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

class Binder {
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
    let plan = result.plan
    if (plan.columns.some((c) => c.hidden)) plan = this.stripHidden(plan)
    // only what the result depends on counts: an unused let of a table reads nothing
    return { plan, tables: tablesRead(plan), visualization: this.visualization, pending: this.pending }
  }

  private stripHidden(plan: P.PlanNode): P.PlanNode {
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
    const args = inv.call.args.map((a) => this.constantOf(a, scope))
    if (args.some((a) => typeof a !== 'string'))
      throw this.err(inv.call.start, `the arguments of pattern '${inv.name}' must be string constants`)
    const path = inv.path ? this.constantOf(inv.path, scope) : undefined
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
  private assignArguments(name: string, params: readonly A.Param[], args: readonly CallArg[], callSite: A.Span): (CallArg | undefined)[] {
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
        return { plan: this.bindDatatable(e, scope) }
      case 'Print':
        return { plan: this.bindPrint(e, scope) }
      case 'Range':
        return { plan: this.bindRange(e, scope) }
      case 'Union':
        return this.bindUnion(undefined, e.params, e.tables, scope)
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
          const name = arg ? this.constantOf(arg, scope) : undefined
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

  private bindTableName(name: string, offset: number, scope: Scope): TabularValue {
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

  private bindDatatable(e: A.DatatableExpr, scope: Scope): P.Values {
    if (e.columns.length === 0) throw this.err(e.start, 'datatable needs at least one column')
    const names = new Set<string>()
    for (const c of e.columns) {
      if (names.has(c.name)) throw this.err(c.start, `duplicate column '${c.name}' in datatable`)
      names.add(c.name)
    }
    const width = e.columns.length
    if (e.values.length % width !== 0) {
      throw this.err(
        e.end - 1,
        `datatable has ${e.values.length} values, which is not a multiple of its ${width} column${width === 1 ? '' : 's'}`,
      )
    }
    const rows: KqlValue[][] = []
    const ctx: RowCtx = { columns: [], scope }
    for (let i = 0; i < e.values.length; i += width) {
      const row: KqlValue[] = []
      for (let c = 0; c < width; c++) {
        const ast = e.values[i + c]!
        const col = e.columns[c]!
        const bound = this.bindScalar(ast, ctx)
        if (bound.kind !== 'Literal') throw this.err(ast.start, 'datatable values must be constants')
        if (
          bound.type !== col.type &&
          bound.value !== null &&
          !(isNumericType(bound.type) && isNumericType(col.type)) &&
          col.type !== 'dynamic' &&
          !(col.type === 'string' && bound.type === 'guid') &&
          !(col.type === 'guid' && bound.type === 'string')
        ) {
          throw this.err(ast.start, `datatable column '${col.name}' is ${col.type}, but the value is ${bound.type}`)
        }
        row.push(bound.type === col.type ? bound.value : convertValue(col.type, bound.type, bound.value))
      }
      rows.push(row)
    }
    return { kind: 'Values', columns: e.columns.map((c) => ({ name: c.name, type: c.type })), rows }
  }

  private bindPrint(e: A.PrintExpr, scope: Scope): P.Project {
    const input: P.Values = { kind: 'Values', columns: [], rows: [[]] }
    const ctx: RowCtx = { columns: [], scope }
    const columns: P.PlanColumn[] = []
    const exprs: P.Expr[] = []
    const taken = new Set<string>()
    e.items.forEach((item, i) => {
      const tuple = this.tupleColumns(item, ctx, true)
      if (tuple) {
        for (const part of tuple) {
          if (taken.has(part.name) && part.declared) throw this.err(item.start, `duplicate column '${part.name}' in print`)
          const name = uniqueName(part.name, taken)
          taken.add(name)
          columns.push({ name, type: part.type })
          exprs.push(part.expr)
        }
        return
      }
      if (item.names.length > 1) throw this.err(item.start, 'only a multi-column function can be assigned to several names')
      const expr = this.bindScalar(item.expr, ctx)
      let name = item.names[0] ?? `print_${i}`
      if (taken.has(name)) {
        if (item.names.length > 0) throw this.err(item.start, `duplicate column '${name}' in print`)
        name = uniqueName(name, taken)
      }
      taken.add(name)
      columns.push({ name, type: expr.type })
      exprs.push(expr)
    })
    return { kind: 'Project', columns, input, exprs }
  }

  private bindRange(e: A.RangeExpr, scope: Scope): P.Range {
    const ctx: RowCtx = { columns: [], scope }
    const from = this.bindScalar(e.from, ctx)
    const to = this.bindScalar(e.to, ctx)
    const step = this.bindScalar(e.step, ctx)
    let type: KqlType
    if (from.type === 'datetime') {
      if (to.type !== 'datetime' || step.type !== 'timespan')
        throw this.err(e.start, 'range over datetimes needs a datetime end and a timespan step')
      type = 'datetime'
    } else if (from.type === 'timespan') {
      if (to.type !== 'timespan' || step.type !== 'timespan') throw this.err(e.start, 'range over timespans needs a timespan end and step')
      type = 'timespan'
    } else if (isNumericType(from.type) && isNumericType(to.type) && isNumericType(step.type)) {
      type =
        from.type === 'real' ||
        to.type === 'real' ||
        step.type === 'real' ||
        from.type === 'decimal' ||
        to.type === 'decimal' ||
        step.type === 'decimal'
          ? 'real'
          : 'long'
    } else {
      throw this.err(e.start, `range needs numeric, datetime or timespan bounds, got ${from.type}, ${to.type} and ${step.type}`)
    }
    const conv = (x: P.Expr): P.Expr => (type === 'real' || type === 'long' ? convert(x, type, e.start) : x)
    return {
      kind: 'Range',
      columns: [{ name: e.column, type }],
      from: conv(from),
      to: conv(to),
      step: type === 'datetime' ? step : conv(step),
    }
  }

  private bindUnion(
    first: TabularValue | undefined,
    params: readonly A.OperatorParam[],
    tables: readonly A.Expr[],
    scope: Scope,
  ): TabularValue {
    let kind: 'inner' | 'outer' = 'outer'
    let withSource: string | undefined
    let fuzzy = false
    for (const p of params) {
      if (p.name === 'kind') {
        if (p.value !== 'inner' && p.value !== 'outer') throw this.err(p.valueStart, "union kind must be 'inner' or 'outer'")
        kind = p.value
      } else if (p.name === 'withsource') {
        withSource = String(p.value)
      } else if (p.name === 'isfuzzy') {
        fuzzy = p.value === true
      }
    }
    const inputs: TabularValue[] = first ? [first] : []
    let firstFailure: KqlError | undefined
    for (const t of tables) {
      if (t.kind === 'Name' && t.name.includes('*')) {
        // wildcards reach workspace tables and `view` lets (documentation: the union scope)
        const views = scope.names().filter((n) => {
          const b = scope.get(n)
          return b?.kind === 'function' && b.lambda.isView
        })
        const matches = [...new Set([...this.tables.keys(), ...views])].filter((n) => matchesPattern(t.name, n)).sort()
        if (matches.length === 0 && !fuzzy) throw this.err(t.start, `no table matches '${t.name}'`)
        for (const m of matches) inputs.push(this.bindTableName(m, t.start, scope))
        continue
      }
      try {
        inputs.push(this.bindTabular(t, scope))
      } catch (error) {
        // isfuzzy: legs that do not resolve are left out, as long as one leg remains
        if (!fuzzy || !(error instanceof KqlError) || error.kind !== 'semantic') throw error
        firstFailure ??= error
      }
    }
    if (inputs.length === 0) throw firstFailure ?? this.err(tables[0]?.start ?? 0, 'union needs at least one table')
    return { plan: this.unionPlan(inputs, kind, withSource) }
  }

  /**
   * Union columns: by name in first-appearance order; a name that comes with different types in
   * different inputs becomes one column per type, `name_type` (Kusto's rule), suffixed on clashes.
   */
  private unionPlan(inputs: readonly TabularValue[], kind: 'inner' | 'outer', withSource: string | undefined): P.Union {
    const typesByName = new Map<string, KqlType[]>()
    for (const inp of inputs) {
      for (const c of visible(inp.plan.columns)) {
        const list = typesByName.get(c.name) ?? []
        if (!list.includes(c.type)) list.push(c.type)
        typesByName.set(c.name, list)
      }
    }
    interface Slot {
      name: string
      type: KqlType
      key: string
      conflicting: boolean
    }
    const slots: Slot[] = []
    const slotIndex = new Map<string, number>()
    for (const inp of inputs) {
      for (const c of visible(inp.plan.columns)) {
        const conflicting = typesByName.get(c.name)!.length > 1
        const key = conflicting ? `${c.name}\u0000${c.type}` : c.name
        if (slotIndex.has(key)) continue
        slotIndex.set(key, slots.length)
        slots.push({ name: c.name, type: c.type, key, conflicting })
      }
    }
    // names that need no suffix are reserved first; `name_type` columns yield on a clash (x_long1)
    const taken = new Set<string>(slots.filter((sl) => !sl.conflicting).map((sl) => sl.name))
    if (withSource) taken.add(withSource)
    for (const slot of slots) {
      if (!slot.conflicting) continue
      slot.name = uniqueName(`${slot.name}_${slot.type}`, taken)
      taken.add(slot.name)
    }
    let chosen = slots.map((_, i) => i)
    if (kind === 'inner') {
      chosen = chosen.filter((i) =>
        inputs.every((inp) =>
          inp.plan.columns.some(
            (c) => !c.hidden && (typesByName.get(c.name)!.length > 1 ? `${c.name}\u0000${c.type}` : c.name) === slots[i]!.key,
          ),
        ),
      )
    }
    const columns: P.PlanColumn[] = []
    if (withSource) columns.push({ name: withSource, type: 'string' })
    for (const i of chosen) columns.push({ name: slots[i]!.name, type: slots[i]!.type })
    const mappings = inputs.map((inp) => {
      const m: number[] = []
      if (withSource) m.push(-1)
      for (const i of chosen) {
        const slot = slots[i]!
        m.push(
          inp.plan.columns.findIndex(
            (c) => !c.hidden && (typesByName.get(c.name)!.length > 1 ? `${c.name}\u0000${c.type}` : c.name) === slot.key,
          ),
        )
      }
      return m
    })
    const sourceNames = withSource ? inputs.map((inp, i) => inp.name ?? `union_arg${i}`) : undefined
    return { kind: 'Union', columns, inputs: inputs.map((i) => i.plan), mappings, sourceNames }
  }

  // -------------------------------------------------------------------------------------------
  // Operators
  // -------------------------------------------------------------------------------------------

  private bindOperator(input: TabularValue, op: A.Operator, scope: Scope): TabularValue {
    const plan = input.plan
    const ctx: RowCtx = { columns: plan.columns, scope }
    const keep = (p: P.PlanNode): TabularValue => ({ plan: p, name: input.name })
    switch (op.kind) {
      case 'Where': {
        // search's terms look at the searched tables' columns, not at the `$table` it adds
        const whereCtx: RowCtx = op.searchSource
          ? { ...ctx, columns: plan.columns.map((c) => (c.name === '$table' ? { ...c, hidden: true } : c)) }
          : ctx
        const predicate = this.bindPredicate(op.predicate, whereCtx, 'where')
        return keep({ kind: 'Filter', columns: plan.columns, input: plan, predicate })
      }
      case 'Project':
        return keep(this.bindProject(plan, op.items, ctx))
      case 'Extend':
        return keep(this.bindExtend(plan, op.items, ctx))
      case 'ProjectAway': {
        const drop = new Set<number>()
        for (const p of op.patterns) {
          const matched = plan.columns.map((c, i) => (!c.hidden && matchesPattern(p.pattern, c.name) ? i : -1)).filter((i) => i >= 0)
          if (matched.length === 0 && !p.pattern.includes('*')) throw this.unknownColumn(p.pattern, p.start, plan.columns)
          for (const i of matched) drop.add(i)
        }
        return keep(
          this.selectColumns(
            plan,
            plan.columns.map((_, i) => i).filter((i) => !drop.has(i) && !plan.columns[i]!.hidden),
          ),
        )
      }
      case 'ProjectKeep': {
        const keepSet = new Set<number>()
        for (const p of op.patterns) {
          // a wildcard never reaches internal columns; naming one exactly does (like project)
          const matched = plan.columns
            .map((c, i) => ((c.hidden ? c.name === p.pattern : matchesPattern(p.pattern, c.name)) ? i : -1))
            .filter((i) => i >= 0)
          if (matched.length === 0 && !p.pattern.includes('*')) throw this.unknownColumn(p.pattern, p.start, plan.columns)
          for (const i of matched) keepSet.add(i)
        }
        return keep(
          this.selectColumns(
            plan,
            plan.columns.map((_, i) => i).filter((i) => keepSet.has(i)),
          ),
        )
      }
      case 'ProjectRename': {
        // internal columns stay hidden unless renamed by name (`project-rename id = _rowid`)
        const columns = [...plan.columns]
        for (const r of op.renames) {
          const idx = columns.findIndex((c) => c.name === r.oldName)
          if (idx < 0) throw this.unknownColumn(r.oldName, r.oldStart, columns)
          const clash = columns.findIndex((c) => c.name === r.newName)
          if (clash >= 0 && clash !== idx) throw this.err(r.start, `project-rename: a column named '${r.newName}' already exists`)
          columns[idx] = { name: r.newName, type: columns[idx]!.type }
        }
        return keep({ kind: 'Project', columns, input: plan, exprs: plan.columns.map((c, i) => ref(i, c)) })
      }
      case 'ProjectReorder': {
        const order: number[] = []
        for (const p of op.patterns) {
          let matched = plan.columns
            .map((c, i) => (!c.hidden && matchesPattern(p.pattern, c.name) && !order.includes(i) ? i : -1))
            .filter((i) => i >= 0)
          if (matched.length === 0 && !p.pattern.includes('*')) throw this.unknownColumn(p.pattern, p.start, plan.columns)
          if (p.direction) {
            const cmp = p.direction.startsWith('granny')
              ? grannyCompare
              : (a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0)
            matched = [...matched].sort((a, b) => cmp(plan.columns[a]!.name, plan.columns[b]!.name))
            if (p.direction.endsWith('desc')) matched.reverse()
          }
          order.push(...matched)
        }
        for (let i = 0; i < plan.columns.length; i++) if (!order.includes(i) && !plan.columns[i]!.hidden) order.push(i)
        return keep(this.selectColumns(plan, order))
      }
      case 'ProjectByNames': {
        const order: number[] = []
        for (const arg of op.args) {
          for (const pattern of this.projectByNamesPatterns(arg, scope)) {
            const matched = plan.columns
              .map((c, i) => (!c.hidden && matchesPattern(pattern, c.name) && !order.includes(i) ? i : -1))
              .filter((i) => i >= 0)
            // documented: names that match no column are ignored
            order.push(...matched)
          }
        }
        return keep(this.selectColumns(plan, order))
      }
      case 'Summarize':
        return keep(this.bindSummarize(plan, op, ctx))
      case 'Count':
        return keep({ kind: 'Count', columns: [{ name: op.name ?? 'Count', type: 'long' }], input: plan })
      case 'Distinct': {
        if (op.items.length === 1 && op.items[0]!.expr.kind === 'Star' && op.items[0]!.names.length === 0) {
          const base = plan.columns.some((c) => c.hidden) ? this.stripHidden(plan) : plan
          return keep({ kind: 'Distinct', columns: base.columns, input: base })
        }
        const projected = this.bindProject(plan, op.items, ctx)
        return keep({ kind: 'Distinct', columns: projected.columns, input: projected })
      }
      case 'Top': {
        const count = this.constantCount(op.count, scope, 'top', plan.columns)
        return keep({ kind: 'Top', columns: plan.columns, input: plan, count, keys: this.bindSortKeys(op.by, ctx) })
      }
      case 'Take':
        return keep({ kind: 'Take', columns: plan.columns, input: plan, count: this.constantCount(op.count, scope, 'take', plan.columns) })
      case 'Sort':
        return keep({ kind: 'Sort', columns: plan.columns, input: plan, keys: this.bindSortKeys(op.by, ctx) })
      case 'Join':
      case 'Lookup':
        return keep(this.bindJoin(plan, op, scope))
      case 'MvExpand':
        return keep(this.bindMvExpand(plan, op, ctx))
      case 'MvApply':
        return keep(this.bindMvApply(plan, op, ctx))
      case 'Parse':
        return keep(this.bindParse(plan, op, ctx))
      case 'ParseKv':
        return keep(this.bindParseKv(plan, op, ctx))
      case 'MakeSeries':
        return keep(this.bindMakeSeries(plan, op, ctx))
      case 'Serialize': {
        const serialized: P.Serialize = { kind: 'Serialize', columns: plan.columns, input: plan }
        if (op.items.length === 0) return keep(serialized)
        return keep(this.bindExtend(serialized, op.items, ctx))
      }
      case 'Sample':
        return keep({ kind: 'Sample', columns: plan.columns, input: plan, count: this.constantCount(op.count, scope, 'sample') })
      case 'SampleDistinct': {
        const expr = this.bindScalar(op.column, ctx)
        const name = this.nameOf(op.column, ctx) ?? 'Column1'
        return keep({
          kind: 'SampleDistinct',
          columns: [{ name, type: expr.type }],
          input: plan,
          count: this.constantCount(op.count, scope, 'sample-distinct'),
          expr,
        })
      }
      case 'As': {
        let p: P.PlanNode = plan
        if (op.params.some((x) => x.name === 'hint.materialized' && x.value === true)) {
          p = { kind: 'Materialize', columns: plan.columns, input: plan, id: this.materializeIds++ }
        }
        const value: TabularValue = { plan: p, name: op.name }
        scope.set(op.name, { kind: 'tabular', value })
        return value
      }
      case 'GetSchema': {
        const cols = visible(plan.columns)
        return keep({
          kind: 'Values',
          columns: [
            { name: 'ColumnName', type: 'string' },
            { name: 'ColumnOrdinal', type: 'int' },
            { name: 'DataType', type: 'string' },
            { name: 'ColumnType', type: 'string' },
          ],
          rows: cols.map((c, i) => [c.name, i, GETSCHEMA_TYPES[c.type], c.type]),
        })
      }
      case 'Render':
        this.visualization = this.bindRender(op, scope)
        return input
      case 'TopNested':
        return keep(this.bindTopNested(plan, op, ctx))
      case 'Scan':
        return keep(this.bindScan(plan, op, ctx))
      case 'Evaluate':
        return keep(bindEvaluate(this, plan, op, ctx)) // plugins.ts
      case 'Invoke': {
        const b = scope.get(op.call.name)
        if (b?.kind !== 'function') {
          throw this.err(
            op.call.start,
            `invoke needs a user-defined function; '${op.call.name}' is not one${didYouMean(op.call.name, scope.names())}`,
          )
        }
        const args: CallArg[] = [{ kind: 'BoundTable', value: input, start: op.start, end: op.start }, ...op.call.args]
        const v = this.invoke(b, args, op.call, undefined, scope)
        if (v.kind !== 'tabular')
          throw this.err(op.call.start, `${op.call.name}() returns a scalar; invoke needs a function that returns a table`)
        return v.value
      }
      case 'Consume':
        return { plan: { kind: 'Take', columns: [], input: { kind: 'Project', columns: [], input: plan, exprs: [] }, count: 0 } }
      case 'TopHitters': {
        const expr = this.bindScalar(op.of, ctx)
        const name = this.nameOf(op.of, ctx) ?? 'Column1'
        const weight = op.by ? this.bindScalar(op.by, ctx) : undefined
        if (weight && !isNumericType(weight.type))
          throw this.err(op.by!.start, `top-hitters: the weight must be numeric, got ${weight.type}`)
        const countName = weight ? `approximate_sum_${this.nameOf(op.by!, ctx) ?? ''}` : `approximate_count_${name}`
        return keep({
          kind: 'TopHitters',
          columns: [
            { name, type: expr.type },
            { name: countName, type: weight ? (weight.type === 'real' || weight.type === 'decimal' ? 'real' : 'long') : 'long' },
          ],
          input: plan,
          count: this.constantCount(op.count, scope, 'top-hitters'),
          expr,
          weight,
        })
      }
      case 'UnionOp':
        return this.bindUnion(input, op.params, op.tables, scope)
      case 'Partition': {
        const base = plan.columns.some((c) => c.hidden) ? this.stripHidden(plan) : plan
        const key = this.bindScalar(op.by, { columns: base.columns, scope })
        if (key.type === 'dynamic')
          throw this.err(op.by.start, 'partition needs a scalar key; convert the dynamic value with tostring() or tolong()')
        let sub: TabularValue = { plan: { kind: 'ApplyInput', columns: base.columns } }
        const subScope = new Scope(scope)
        for (const subOp of op.subquery) sub = this.bindOperator(sub, subOp, subScope)
        const subPlan = sub.plan.columns.some((c) => c.hidden) ? this.stripHidden(sub.plan) : sub.plan
        return keep({ kind: 'Partition', columns: subPlan.columns, input: base, key, subquery: subPlan })
      }
    }
  }

  private unknownColumn(name: string, offset: number, columns: readonly P.PlanColumn[]): KqlError {
    return this.err(
      offset,
      `unknown column '${name}'${didYouMean(
        name,
        columns.map((c) => c.name),
      )}`,
    )
  }

  private selectColumns(plan: P.PlanNode, indexes: readonly number[]): P.Project {
    return {
      kind: 'Project',
      columns: indexes.map((i) => unhide(plan.columns[i]!)),
      input: plan,
      exprs: indexes.map((i) => ref(i, plan.columns[i]!)),
    }
  }

  private projectByNamesPatterns(arg: A.Expr, scope: Scope): string[] {
    if (arg.kind === 'Call' && arg.name === 'column_names_of') {
      const t = arg.args[0]
      if (!t) throw this.err(arg.start, 'column_names_of() expects a table')
      return visible(this.bindTabular(t, scope).plan.columns).map((c) => c.name)
    }
    const bound = this.bindScalar(arg, { columns: [], scope })
    if (bound.kind !== 'Literal') throw this.err(arg.start, 'project-by-names expects constant column names or patterns')
    const v = bound.value
    if (typeof v === 'string') return [v]
    if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string')
    throw this.err(arg.start, 'project-by-names expects strings, dynamic arrays of strings or column_names_of()')
  }

  /** A constant row count (take, top, sample): a non-negative integer. */
  private constantCount(e: A.Expr, scope: Scope, what: string, columns: readonly P.PlanColumn[] = []): number {
    if (e.kind === 'Name' && columns.some((c) => c.name === e.name)) {
      throw this.err(e.start, `${what} expects a constant number of rows; '${e.name}' is a column`)
    }
    const bound = this.bindScalar(e, { columns: [], scope })
    if (bound.kind !== 'Literal' || typeof bound.value !== 'number' || !Number.isFinite(bound.value)) {
      throw this.err(e.start, `${what} expects a constant number of rows`)
    }
    if (bound.value < 0) throw this.err(e.start, `${what} expects a non-negative number of rows`)
    return Math.trunc(bound.value)
  }

  private constantOf(e: A.Expr, scope: Scope): KqlValue | undefined {
    const bound = this.bindScalar(e, { columns: [], scope })
    return bound.kind === 'Literal' ? bound.value : undefined
  }

  private bindPredicate(e: A.Expr, ctx: RowCtx, what: string): P.Expr {
    const p = this.bindScalar(e, ctx)
    if (p.type === 'bool') return p
    if (p.type === 'dynamic') return convert(p, 'bool', e.start)
    throw this.err(e.start, `${what} needs a bool predicate, but '${this.src(e).slice(0, 40)}' is ${p.type}`)
  }

  private bindSortKeys(items: readonly A.OrderItem[], ctx: RowCtx): P.SortKey[] {
    return items.map((it) => {
      const expr = this.bindScalar(it.expr, ctx)
      const descending = it.direction !== 'asc'
      return { expr, descending, nullsFirst: it.nulls ? it.nulls === 'first' : !descending }
    })
  }

  /** The column name an unnamed expression gets (a column keeps its name), or undefined. */
  nameOf(e: A.Expr, _ctx: RowCtx): string | undefined {
    return resultName(e)
  }

  /**
   * A multi-column function used as a whole projection item (`extend series_stats(x)`,
   * `print array_sort_asc(a, b)`): one column per part, named `(a, b) = ...` or by Kusto's
   * defaults. Undefined when the item is an ordinary expression. Print keeps only named parts
   * when names are given; extend/project add the rest with their default names.
   */
  private tupleColumns(
    item: A.NamedExpr,
    ctx: RowCtx,
    print: boolean,
  ): { name: string; type: KqlType; expr: P.Expr; declared: boolean }[] | undefined {
    const e = item.expr
    if (e.kind !== 'Call' || ctx.scope.get(e.name)) return undefined
    const isSort = e.name === 'array_sort_asc' || e.name === 'array_sort_desc'
    if (!isSort && !multiColumnOutputs(e.name, undefined)) return undefined
    if (isSort && e.args.length < 2) return undefined
    const call = this.bindScalar(e, ctx)
    // the arguments' own types: a call of constants is folded into a literal, which keeps none
    const infos = e.args.map((a) => argInfo(this, a, this.bindScalar(a, ctx)))
    const outputs = isSort ? arraySortOutputs(infos) : multiColumnOutputs(e.name, infos[0])!
    if (isSort && outputs.length < 2) return undefined
    if (item.names.length > outputs.length)
      throw this.err(item.start, `${e.name}() produces ${outputs.length} columns, but ${item.names.length} names were given`)
    const shared: P.Expr = call.kind === 'Call' ? { ...call, shared: true } : call
    const parts = outputs.map((o, i) => {
      const member: P.Expr = {
        kind: 'Member',
        type: 'dynamic',
        target: shared,
        key: isSort ? literal('long', i) : literal('string', o.name.slice(o.name.lastIndexOf('_') + 1)),
      }
      return {
        name: item.names[i] ?? o.name,
        type: o.type,
        expr: fold(convert(member, o.type, e.start)),
        declared: i < item.names.length,
      }
    })
    if (!isSort) {
      // the bag keys are the listed suffixes, which may themselves contain '_' (min_idx)
      const suffixes = multiColumnOutputs(e.name, { type: 'dynamic', text: '', columnName: '' })!.map((o) =>
        o.name.slice(e.name.length + 2),
      )
      parts.forEach((p, i) => {
        const member: P.Expr = { kind: 'Member', type: 'dynamic', target: shared, key: literal('string', suffixes[i]!) }
        p.expr = fold(convert(member, p.type, e.start))
      })
    }
    return print && item.names.length > 0 ? parts.filter((p) => p.declared) : parts
  }

  private bindProject(plan: P.PlanNode, items: readonly A.NamedExpr[], ctx: RowCtx): P.Project {
    const columns: P.PlanColumn[] = []
    const exprs: P.Expr[] = []
    const declared = new Set<string>()
    const taken = new Set<string>()
    let n = 1
    for (const item of items) {
      if (item.expr.kind === 'Star' && item.names.length === 0) {
        plan.columns.forEach((c, i) => {
          if (c.hidden || taken.has(c.name)) return
          taken.add(c.name)
          columns.push(c)
          exprs.push(ref(i, c))
        })
        continue
      }
      const tuple = this.tupleColumns(item, ctx, false)
      if (tuple) {
        for (const part of tuple) {
          if (taken.has(part.name) && part.declared) throw this.err(item.start, `the column '${part.name}' is projected twice`)
          const name = uniqueName(part.name, taken)
          taken.add(name)
          if (part.declared) declared.add(name)
          columns.push({ name, type: part.type })
          exprs.push(part.expr)
        }
        continue
      }
      if (item.names.length > 1) throw this.err(item.start, `only a multi-column function can be assigned to several names`)
      const expr = this.bindScalar(item.expr, ctx)
      let name = item.names[0] ?? this.nameOf(item.expr, ctx)
      const isDeclared = item.names.length > 0 || (item.expr.kind === 'Name' && expr.kind === 'ColumnRef')
      if (!name) {
        do name = `Column${n++}`
        while (taken.has(name))
      }
      if (taken.has(name)) {
        if (isDeclared && declared.has(name)) throw this.err(item.start, `the column '${name}' is projected twice`)
        name = uniqueName(name, taken)
      }
      taken.add(name)
      if (isDeclared) declared.add(name)
      columns.push({ name, type: expr.type })
      exprs.push(expr)
    }
    return { kind: 'Project', columns, input: plan, exprs }
  }

  private bindExtend(plan: P.PlanNode, items: readonly A.NamedExpr[], ctx: RowCtx): P.Project {
    const columns: P.PlanColumn[] = [...plan.columns]
    const exprs: P.Expr[] = plan.columns.map((c, i) => ref(i, c))
    let n = 1
    const put = (name: string, type: KqlType, expr: P.Expr): void => {
      const idx = columns.findIndex((c) => c.name === name)
      if (idx >= 0) {
        columns[idx] = { name, type }
        exprs[idx] = expr
      } else {
        columns.push({ name, type })
        exprs.push(expr)
      }
    }
    for (const item of items) {
      const tuple = this.tupleColumns(item, ctx, false)
      if (tuple) {
        for (const part of tuple) put(part.name, part.type, part.expr)
        continue
      }
      if (item.names.length > 1) throw this.err(item.start, `only a multi-column function can be assigned to several names`)
      const expr = this.bindScalar(item.expr, ctx)
      let name = item.names[0] ?? this.nameOf(item.expr, ctx)
      if (!name) {
        do name = `Column${n++}`
        while (columns.some((c) => c.name === name) || ctx.scope.get(name!) !== undefined)
      }
      const idx = columns.findIndex((c) => c.name === name)
      const column = { name, type: expr.type }
      if (idx >= 0) {
        columns[idx] = column
        exprs[idx] = expr
      } else {
        columns.push(column)
        exprs.push(expr)
      }
    }
    return { kind: 'Project', columns, input: plan, exprs }
  }

  // -------------------------------------------------------------------------------------------
  // summarize
  // -------------------------------------------------------------------------------------------

  private bindSummarize(plan: P.PlanNode, op: A.SummarizeOp, ctx: RowCtx): P.PlanNode {
    const keys: P.Expr[] = []
    const keyColumns: P.PlanColumn[] = []
    const taken = new Set<string>()
    let n = 1
    const nextDefault = (): string => {
      let name: string
      do name = `Column${n++}`
      while (taken.has(name))
      return name
    }
    for (const item of op.by) {
      if (item.names.length > 1) throw this.err(item.start, 'a group key has one name', 'syntax')
      const expr = this.bindScalar(item.expr, ctx)
      if (expr.type === 'dynamic')
        throw this.err(
          item.expr.start,
          `summarize cannot group by a dynamic value ('${this.src(item.expr).slice(0, 40)}'); convert it with tostring() or tolong()`,
        )
      let name = item.names[0] ?? this.nameOf(item.expr, ctx) ?? nextDefault()
      if (taken.has(name)) {
        if (item.names.length > 0) throw this.err(item.start, `duplicate column '${name}' in summarize`)
        name = uniqueName(name, taken)
      }
      taken.add(name)
      keys.push(expr)
      keyColumns.push({ name, type: expr.type })
    }
    const agg: AggCollector = { input: ctx, base: keys.length, calls: [], width: 0 }
    const actx: RowCtx = { ...ctx, agg }
    interface Item {
      item: A.NamedExpr
      expr: P.Expr
      direct?: P.AggregateCall
    }
    const items: Item[] = []
    for (const item of op.aggregates) {
      const callsBefore = agg.calls.length
      const widthBefore = agg.width
      const expr = this.bindScalar(item.expr, actx)
      if (agg.calls.length === callsBefore) {
        throw this.err(
          item.expr.start,
          `summarize expects aggregations such as count() or avg(x); '${this.src(item.expr).slice(0, 40)}' is not one`,
        )
      }
      const direct =
        item.expr.kind === 'Call' &&
        agg.calls.length === callsBefore + 1 &&
        expr.kind === 'ColumnRef' &&
        expr.index === agg.base + widthBefore
          ? agg.calls[callsBefore]
          : undefined
      items.push({ item, expr, direct })
    }
    // the Summarize node's own columns: keys, then every aggregate output
    const sumColumns: P.PlanColumn[] = [...keyColumns]
    const internal = new Set(taken)
    for (const call of agg.calls) {
      for (const o of call.outputs) {
        const name = uniqueName(o.name, internal)
        internal.add(name)
        sumColumns.push({ name, type: o.type })
      }
    }
    // the final columns, in item order
    const finalColumns: P.PlanColumn[] = [...keyColumns]
    const finalExprs: P.Expr[] = keyColumns.map((c, i) => ({ kind: 'ColumnRef', index: i, name: c.name, type: c.type }))
    const declared = new Set<string>(op.by.filter((b) => b.names.length > 0).map((b) => b.names[0]!))
    for (const { item, expr, direct } of items) {
      if (direct) {
        const start = agg.base + agg.calls.slice(0, agg.calls.indexOf(direct)).reduce((s, c) => s + c.outputs.length, 0)
        if (item.names.length > direct.outputs.length)
          throw this.err(
            item.start,
            `${direct.name}() produces ${direct.outputs.length} column(s), but ${item.names.length} names were given`,
          )
        direct.outputs.forEach((o, k) => {
          const explicit = item.names[k]
          let name = explicit ?? o.name
          if (!explicit && direct.star && taken.has(name) && k > 0) return
          if (taken.has(name)) {
            if (explicit && declared.has(name)) throw this.err(item.start, `duplicate column '${name}' in summarize`)
            name = uniqueName(name, taken)
          }
          taken.add(name)
          if (explicit) declared.add(name)
          finalColumns.push({ name, type: o.type })
          finalExprs.push({ kind: 'ColumnRef', index: start + k, name, type: o.type })
        })
        continue
      }
      if (item.names.length > 1)
        throw this.err(item.start, 'naming several columns from one expression is not supported here', 'unsupported')
      let name = item.names[0] ?? this.nameOf(item.expr, ctx) ?? nextDefault()
      if (taken.has(name)) {
        if (item.names.length > 0 && declared.has(name)) throw this.err(item.start, `duplicate column '${name}' in summarize`)
        name = uniqueName(name, taken)
      }
      taken.add(name)
      finalColumns.push({ name, type: expr.type })
      finalExprs.push(expr)
    }
    const identity =
      finalExprs.length === sumColumns.length &&
      finalExprs.every((e, i) => e.kind === 'ColumnRef' && e.index === i && sumColumns[i]!.type === finalColumns[i]!.type)
    if (identity)
      return {
        kind: 'Summarize',
        columns: finalColumns,
        input: plan,
        keys,
        aggregates: this.renameOutputs(agg.calls, finalColumns.slice(keys.length)),
      }
    const summarize: P.Summarize = {
      kind: 'Summarize',
      columns: sumColumns,
      input: plan,
      keys,
      aggregates: this.renameOutputs(agg.calls, sumColumns.slice(keys.length)),
    }
    return { kind: 'Project', columns: finalColumns, input: summarize, exprs: finalExprs }
  }

  private renameOutputs(calls: readonly P.AggregateCall[], names: readonly P.PlanColumn[]): P.AggregateCall[] {
    let k = 0
    return calls.map((c) => ({ ...c, outputs: c.outputs.map(() => names[k++]!) }))
  }

  /** Scalar expressions are bound by scalar-expressions.ts; the binder's parts call back through here. */
  bindScalar(e: A.Expr, ctx: RowCtx): P.Expr {
    return bindScalar(this, e, ctx)
  }

  // -------------------------------------------------------------------------------------------
  // join / lookup
  // -------------------------------------------------------------------------------------------

  private bindJoin(leftPlan: P.PlanNode, op: A.JoinOp | A.LookupOp, scope: Scope): P.Join {
    const isLookup = op.kind === 'Lookup'
    let kind: P.JoinKind = isLookup ? 'leftouter' : 'innerunique'
    for (const p of op.params) {
      if (p.name !== 'kind') continue
      const v = String(p.value)
      const k = (JOIN_ALIASES[v] ?? v) as P.JoinKind
      if (!JOIN_KINDS.has(k) || (isLookup && k !== 'leftouter' && k !== 'inner')) {
        throw this.err(
          p.valueStart,
          isLookup
            ? `lookup kind must be leftouter or inner, got '${v}'`
            : `unknown join kind '${v}': expected innerunique, inner, leftouter, rightouter, fullouter, leftanti, rightanti, leftsemi or rightsemi`,
        )
      }
      kind = k
    }
    let left = leftPlan
    if (left.columns.some((c) => c.hidden)) left = this.stripHidden(left)
    let right = this.bindTabular(op.right, scope).plan
    if (right.columns.some((c) => c.hidden)) right = this.stripHidden(right)
    const leftKeys: number[] = []
    const rightKeys: number[] = []
    for (const cond of op.on) {
      const li = left.columns.findIndex((c) => c.name === cond.left)
      if (li < 0)
        throw this.err(
          cond.leftStart,
          `the left side of the ${isLookup ? 'lookup' : 'join'} has no column '${cond.left}'${didYouMean(
            cond.left,
            left.columns.map((c) => c.name),
          )}`,
        )
      const ri = right.columns.findIndex((c) => c.name === cond.right)
      if (ri < 0)
        throw this.err(
          cond.rightStart,
          `the right side of the ${isLookup ? 'lookup' : 'join'} has no column '${cond.right}'${didYouMean(
            cond.right,
            right.columns.map((c) => c.name),
          )}`,
        )
      const lt = left.columns[li]!.type
      const rt = right.columns[ri]!.type
      if (lt !== rt && !(isNumericType(lt) && isNumericType(rt))) {
        throw this.err(cond.start, `join keys must have the same type: '${cond.left}' is ${lt} and '${cond.right}' is ${rt}`)
      }
      leftKeys.push(li)
      rightKeys.push(ri)
    }
    let columns: P.PlanColumn[]
    let rightOutput: number[]
    if (kind === 'leftsemi' || kind === 'leftanti') {
      columns = [...left.columns]
      rightOutput = []
    } else if (kind === 'rightsemi' || kind === 'rightanti') {
      columns = [...right.columns]
      rightOutput = right.columns.map((_, i) => i)
    } else {
      rightOutput = right.columns.map((_, i) => i).filter((i) => !isLookup || !rightKeys.includes(i))
      const taken = new Set(left.columns.map((c) => c.name))
      columns = [...left.columns]
      for (const i of rightOutput) {
        const c = right.columns[i]!
        const name = uniqueName(c.name, taken)
        taken.add(name)
        columns.push({ name, type: c.type })
      }
    }
    return { kind: 'Join', columns, joinKind: kind, left, right, leftKeys, rightKeys, rightOutput, isLookup }
  }

  // -------------------------------------------------------------------------------------------
  // mv-expand / mv-apply
  // -------------------------------------------------------------------------------------------

  private bagExpansion(params: readonly A.OperatorParam[]): 'bag' | 'array' {
    let mode: 'bag' | 'array' = 'bag'
    for (const p of params) {
      if (p.name === 'bagexpansion' || p.name === 'kind') {
        if (p.value !== 'bag' && p.value !== 'array') throw this.err(p.valueStart, `${p.name} must be 'bag' or 'array'`)
        mode = p.value
      }
    }
    return mode
  }

  private bindMvExpand(plan: P.PlanNode, op: A.MvExpandOp, ctx: RowCtx): P.MvExpand {
    const columns: P.PlanColumn[] = [...plan.columns]
    const items: P.ExpandItem[] = []
    let n = 1
    for (const item of op.items) {
      const expr = this.bindScalar(item.expr, ctx)
      if (expr.type !== 'dynamic')
        throw this.err(item.expr.start, `mv-expand needs a dynamic array or bag, but '${this.src(item.expr).slice(0, 40)}' is ${expr.type}`)
      const type = item.toType ?? 'dynamic'
      let name = item.name ?? this.nameOf(item.expr, ctx)
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
    const limit = op.limit ? this.constantCount(op.limit, ctx.scope, 'mv-expand limit') : undefined
    return { kind: 'MvExpand', columns, input: plan, items, bagExpansion: this.bagExpansion(op.params), itemIndex, limit }
  }

  private bindMvApply(plan: P.PlanNode, op: A.MvApplyOp, ctx: RowCtx): P.MvApply {
    // the sub-table: the row's columns, each item replacing its column or appended, then the index
    const subtableColumns = plan.columns.map((c, i) => (c.hidden ? -1 : i)).filter((i) => i >= 0)
    const subColumns: P.PlanColumn[] = subtableColumns.map((i) => plan.columns[i]!)
    const items: P.Expr[] = []
    const itemTypes: KqlType[] = []
    const itemOutputs: number[] = []
    const expandedInPlace = new Set<number>()
    let n = 1
    for (const item of op.items) {
      const expr = this.bindScalar(item.expr, ctx)
      if (expr.type !== 'dynamic')
        throw this.err(item.expr.start, `mv-apply needs a dynamic array or bag, but '${this.src(item.expr).slice(0, 40)}' is ${expr.type}`)
      const type = item.toType ?? 'dynamic'
      let name = item.name ?? this.nameOf(item.expr, ctx)
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
      if (at >= 0) throw this.err(indexParam.valueStart, `mv-apply: with_itemindex names an existing column '${name}'`)
      subColumns.push({ name, type: 'long' })
    }
    const applyInput: P.ApplyInput = { kind: 'ApplyInput', columns: subColumns }
    let sub: TabularValue = { plan: applyInput }
    const subScope = new Scope(ctx.scope)
    for (const subOp of op.subquery) sub = this.bindOperator(sub, subOp, subScope)
    let subPlan = sub.plan
    if (subPlan.columns.some((c) => c.hidden)) subPlan = this.stripHidden(subPlan)
    const produced = new Set(subPlan.columns.map((c) => c.name))
    const keptColumns = subtableColumns.filter((i) => !expandedInPlace.has(i) && !produced.has(plan.columns[i]!.name))
    const columns: P.PlanColumn[] = [...keptColumns.map((i) => plan.columns[i]!), ...subPlan.columns]
    const limit = op.limit ? this.constantCount(op.limit, ctx.scope, 'mv-apply limit') : undefined
    return {
      kind: 'MvApply',
      columns,
      input: plan,
      items,
      itemTypes,
      subtableColumns,
      itemOutputs,
      bagExpansion: this.bagExpansion(op.params),
      withItemIndex: indexParam !== undefined,
      ...(limit !== undefined ? { limit } : {}),
      keptColumns,
      subquery: subPlan,
    }
  }

  // -------------------------------------------------------------------------------------------
  // parse / parse-kv
  // -------------------------------------------------------------------------------------------

  private bindParse(plan: P.PlanNode, op: A.ParseOp, ctx: RowCtx): P.Parse {
    let mode: 'simple' | 'relaxed' | 'regex' = 'simple'
    let flags = ''
    for (const p of op.params) {
      if (p.name === 'kind') {
        if (p.value !== 'simple' && p.value !== 'relaxed' && p.value !== 'regex')
          throw this.err(p.valueStart, 'parse kind must be simple, relaxed or regex')
        mode = p.value
      } else if (p.name === 'flags') {
        for (const f of String(p.value)) {
          if (f === 'i' || f === 'm' || f === 's' || f === 'U') flags += f
          else throw this.err(p.valueStart, `unknown regex flag '${f}' (parse knows i, m, s and U)`)
        }
      }
    }
    const source = toText(this.bindScalar(op.source, ctx), op.source.start)
    const columns: P.PlanColumn[] = [...plan.columns]
    const types: KqlType[] = []
    const outputs: number[] = []
    for (const part of op.pattern) {
      if (part.kind !== 'column') continue
      const type = part.type ?? 'string'
      types.push(type)
      let idx = columns.findIndex((c) => c.name === part.name)
      if (idx >= 0) columns[idx] = { name: part.name, type }
      else {
        idx = columns.length
        columns.push({ name: part.name, type })
      }
      outputs.push(idx)
    }
    if (outputs.length === 0) throw this.err(op.start, 'the parse pattern names no column to extract')
    const built = buildParseRegex(op.pattern, mode, types, flags)
    try {
      compileRegex(built.source, built.flags, 'parse')
    } catch (error) {
      this.rethrowAt(error, op.start)
    }
    const captures = built.groups.map((group, k) => ({ group, output: outputs[k]!, type: types[k]! }))
    return {
      kind: 'Parse',
      columns,
      input: plan,
      source,
      regex: built.source,
      flags: built.flags,
      captures,
      dropUnmatched: op.where,
      relaxed: mode === 'relaxed',
    }
  }

  private bindParseKv(plan: P.PlanNode, op: A.ParseKvOp, ctx: RowCtx): P.ParseKv {
    const source = toText(this.bindScalar(op.source, ctx), op.source.start)
    const columns: P.PlanColumn[] = [...plan.columns]
    const keys = op.keys.map((k) => {
      let output = columns.findIndex((c) => c.name === k.name)
      if (output >= 0) columns[output] = { name: k.name, type: k.type }
      else {
        output = columns.length
        columns.push({ name: k.name, type: k.type })
      }
      return { name: k.name, type: k.type, output }
    })
    const opt = (name: string): string | undefined => {
      const p = op.options.find((o) => o.name === name)
      return p === undefined ? undefined : String(p.value)
    }
    const regex = opt('regex')
    if (regex !== undefined) {
      try {
        compileRegex(regex, '', 'parse-kv')
      } catch (error) {
        this.rethrowAt(error, op.start)
      }
    }
    const pairDelimiter = opt('pair_delimiter')
    const kvDelimiter = opt('kv_delimiter')
    if ((pairDelimiter === undefined) !== (kvDelimiter === undefined)) {
      throw this.err(op.start, 'parse-kv needs both pair_delimiter and kv_delimiter, or neither')
    }
    return {
      kind: 'ParseKv',
      columns,
      input: plan,
      source,
      keys,
      ...(pairDelimiter !== undefined ? { pairDelimiter } : {}),
      ...(kvDelimiter !== undefined ? { kvDelimiter } : {}),
      ...(opt('quote') !== undefined ? { quote: opt('quote') } : {}),
      ...(opt('escape') !== undefined ? { escape: opt('escape') } : {}),
      ...(regex !== undefined ? { regex } : {}),
      greedy: op.options.some((o) => o.name === 'greedy' && o.value === true),
    }
  }

  // -------------------------------------------------------------------------------------------
  // make-series / top-nested
  // -------------------------------------------------------------------------------------------

  private bindMakeSeries(plan: P.PlanNode, op: A.MakeSeriesOp, ctx: RowCtx): P.MakeSeries {
    const scalarCtx: RowCtx = { columns: [], scope: ctx.scope }
    const keys: P.Expr[] = []
    const keyColumns: P.PlanColumn[] = []
    const taken = new Set<string>()
    let n = 1
    for (const item of op.by) {
      const expr = this.bindScalar(item.expr, ctx)
      let name = item.names[0] ?? this.nameOf(item.expr, ctx)
      if (!name) {
        do name = `Column${n++}`
        while (taken.has(name))
      }
      name = uniqueName(name, taken)
      taken.add(name)
      keys.push(expr)
      keyColumns.push({ name, type: expr.type })
    }
    const axis = this.bindScalar(op.on, ctx)
    if (axis.type !== 'datetime' && axis.type !== 'timespan' && !isNumericType(axis.type)) {
      throw this.err(op.on.start, `make-series needs a datetime, timespan or numeric axis, got ${axis.type}`)
    }
    const step = this.bindScalar(op.step, scalarCtx)
    const from = op.from ? this.bindScalar(op.from, scalarCtx) : undefined
    const to = op.to ? this.bindScalar(op.to, scalarCtx) : undefined
    const expectedStep = axis.type === 'datetime' || axis.type === 'timespan' ? 'timespan' : 'number'
    if ((expectedStep === 'timespan' && step.type !== 'timespan') || (expectedStep === 'number' && !isNumericType(step.type))) {
      throw this.err(
        op.step.start,
        `make-series step must be ${expectedStep === 'timespan' ? 'a timespan' : 'a number'} for a ${axis.type} axis, got ${step.type}`,
      )
    }
    const agg: AggCollector = { input: ctx, base: 0, calls: [], width: 0 }
    const actx: RowCtx = { ...ctx, agg }
    const aggregates: P.AggregateCall[] = []
    const defaults: KqlValue[] = []
    const aggColumns: P.PlanColumn[] = []
    for (const a of op.aggregates) {
      const e = a.item.expr
      const isAggregate = e.kind === 'Call' && this.lib.lookupAggregate(e.name) !== undefined
      if (!isAggregate) {
        // a constant column (`k = 5`): the same value in every bin that has rows, the default elsewhere
        const constant = this.bindScalar(e, scalarCtx)
        if (constant.kind !== 'Literal')
          throw this.err(
            e.start,
            `make-series expects an aggregation such as count() or avg(x), or a constant; '${this.src(e).slice(0, 40)}' is neither`,
          )
      }
      const aggregateExpr: A.Expr = isAggregate
        ? e
        : { kind: 'Call', name: 'take_any', nameEnd: e.start, args: [e], start: e.start, end: e.end }
      const before = agg.calls.length
      this.bindScalar(aggregateExpr, actx)
      const call = agg.calls[before]!
      if (call.outputs.length !== 1)
        throw this.err(e.start, `${call.name}() produces several columns and cannot be used in make-series`, 'unsupported')
      let name = a.item.names[0] ?? (isAggregate ? call.outputs[0]!.name : `Column${n++}`)
      name = uniqueName(name, taken)
      taken.add(name)
      aggregates.push({ ...call, outputs: [{ name, type: call.outputs[0]!.type }] })
      aggColumns.push({ name, type: 'dynamic' })
      let dv: KqlValue = 0
      if (a.defaultValue) {
        const d = this.bindScalar(a.defaultValue, scalarCtx)
        if (d.kind !== 'Literal') throw this.err(a.defaultValue.start, 'make-series default must be a constant')
        dv = d.value
      }
      const outType = call.outputs[0]!.type
      defaults.push(
        dv === null ? null : convertValue(outType, typeof dv === 'number' ? (Number.isInteger(dv) ? 'long' : 'real') : outType, dv),
      )
    }
    const axisName = uniqueName(this.nameOf(op.on, ctx) ?? 'Column1', taken)
    const columns: P.PlanColumn[] = [...keyColumns, ...aggColumns, { name: axisName, type: 'dynamic' }]
    const series: P.MakeSeries = {
      kind: 'MakeSeries',
      columns,
      input: plan,
      keys,
      aggregates,
      defaults,
      axis,
      from,
      to,
      step,
      aggregateOutputs: aggColumns.map((_, i) => keyColumns.length + i),
      axisOutput: columns.length - 1,
      nonEmpty: op.params.some((p) => p.name === 'kind' && p.value === 'nonempty'),
      ...(op.rangeSyntax ? { rangeSyntax: true } : {}),
    }
    const binCall: A.Expr = { kind: 'Call', name: 'bin', nameEnd: op.on.start, args: [op.on, op.step], start: op.on.start, end: op.on.end }
    return preAggregateMakeSeries(series, () => this.bindScalar(binCall, ctx)) ?? series
  }

  private bindTopNested(plan: P.PlanNode, op: A.TopNestedOp, ctx: RowCtx): P.TopNested {
    const columns: P.PlanColumn[] = []
    const taken = new Set<string>()
    const levels: P.TopNestedLevel[] = op.levels.map((level) => {
      const count = level.count ? this.constantCount(level.count, ctx.scope, 'top-nested') : undefined
      const key = this.bindScalar(level.of.expr, ctx)
      const keyName = uniqueName(level.of.names[0] ?? this.nameOf(level.of.expr, ctx) ?? `Column${columns.length + 1}`, taken)
      taken.add(keyName)
      columns.push({ name: keyName, type: key.type })
      const agg: AggCollector = { input: ctx, base: 0, calls: [], width: 0 }
      const byExpr = level.by.expr
      if (byExpr.kind !== 'Call' || !this.lib.lookupAggregate(byExpr.name)) {
        throw this.err(byExpr.start, `top-nested expects an aggregation after 'by'; '${this.src(byExpr).slice(0, 40)}' is not one`)
      }
      this.bindScalar(byExpr, { ...ctx, agg })
      const call = agg.calls[0]!
      const aggName = uniqueName(level.by.names[0] ?? `aggregated_${keyName}`, taken)
      taken.add(aggName)
      const aggType = call.outputs[0]!.type
      columns.push({ name: aggName, type: aggType })
      let others: KqlValue | undefined
      if (level.others) {
        const o = this.bindScalar(level.others.value, { columns: [], scope: ctx.scope })
        if (o.kind !== 'Literal') throw this.err(level.others.value.start, "top-nested 'with others' needs a constant")
        others = convertValue(key.type, o.type, o.value)
      }
      return {
        ...(count !== undefined ? { count } : {}),
        key,
        aggregate: { ...call, outputs: [{ name: aggName, type: aggType }] },
        descending: level.direction !== 'asc',
        ...(others !== undefined ? { others } : {}),
      }
    })
    return { kind: 'TopNested', columns, input: plan, levels }
  }

  // -------------------------------------------------------------------------------------------
  // scan
  // -------------------------------------------------------------------------------------------

  private bindScan(plan: P.PlanNode, op: A.ScanOp, ctx: RowCtx): P.ScanPattern {
    const input = visible(plan.columns)
    if (input.length !== plan.columns.length) plan = this.stripHidden(plan)
    const declared = op.declare.map((d) => {
      let defaultValue: KqlValue = d.type === 'string' ? '' : null
      if (d.defaultValue) {
        const v = this.bindScalar(d.defaultValue, { columns: [], scope: ctx.scope })
        if (v.kind !== 'Literal') throw this.err(d.defaultValue.start, 'a scan declare default must be a constant')
        defaultValue = convertValue(d.type, v.type, v.value)
      }
      if (input.some((c) => c.name === d.name)) throw this.err(d.start, `scan declares '${d.name}', which is already a column`)
      return { name: d.name, type: d.type, defaultValue }
    })
    const stepColumns: P.PlanColumn[] = [...input, ...declared.map((d) => ({ name: d.name, type: d.type }))]
    const width = stepColumns.length
    const steps = new Map<string, number>()
    op.steps.forEach((s, i) => {
      if (steps.has(s.name)) throw this.err(s.start, `duplicate scan step '${s.name}'`)
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
      const predicate = this.bindPredicate(s.predicate, rowCtx, `scan step '${s.name}'`)
      const assignments = s.assignments.map((a) => {
        const index = declared.findIndex((d) => d.name === a.name)
        if (index < 0)
          throw this.err(
            a.start,
            `scan can only assign declared columns; '${a.name}' is not declared${didYouMean(
              a.name,
              declared.map((d) => d.name),
            )}`,
          )
        const expr = this.convertArgument(
          this.bindScalar(a.value, rowCtx),
          declared[index]!.type,
          a.start,
          `scan assignment to '${a.name}'`,
        )
        return { index, expr }
      })
      return { name: s.name, output: s.output ?? 'all', predicate, assignments }
    })
    const matchParam = op.params.find((p) => p.name === 'with_match_id')
    const columns: P.PlanColumn[] = [...stepColumns]
    if (matchParam) columns.push({ name: String(matchParam.value), type: 'long' })
    return { kind: 'ScanPattern', columns, input: plan, declared, steps: stepPlans, withMatchId: matchParam !== undefined }
  }

  // -------------------------------------------------------------------------------------------
  // render (evaluate plugins: plugins.ts)
  // -------------------------------------------------------------------------------------------

  private bindRender(op: A.RenderOp, scope: Scope): Visualization {
    const properties: Record<string, unknown> = {}
    for (const p of op.properties) {
      const v = p.value
      if (v.kind === 'Name') properties[p.name] = v.name
      else if (v.kind === 'Call' && v.name === '') properties[p.name] = v.args.map((a) => (a.kind === 'Name' ? a.name : this.src(a)))
      else {
        const bound = this.bindScalar(v, { columns: [], scope })
        properties[p.name] =
          bound.kind === 'Literal' ? (typeof bound.value === 'bigint' ? String(bound.value) : (bound.value as DynamicValue)) : this.src(v)
      }
    }
    return { kind: op.chart, properties }
  }
}

/** Natural ("granny") order: digit runs compare as numbers, case-insensitively. */
function grannyCompare(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' })
}
