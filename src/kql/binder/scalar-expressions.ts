/**
 * @module
 * Scalar expressions → plan expressions (issue 19 item 6: moved out of binder.ts as they were):
 * names, member access, operators with Kusto's typing, `in`, calls of library, user, aggregate
 * and window functions, constant folding. The tabular binder (binder.ts) is the `BindContext`.
 */
import { compileExpr } from '../exec/compile-expr.js'
import type { ExprRuntime } from '../exec/rows.js'
import type { AggregateFunction, ArgInfo } from '../functions/function-types.js'
import { compileRegex } from '../functions/regex.js'
import { convertValue } from '../functions/value-conversions.js'
import type * as P from '../plan/plan.js'
import { STRING_OPS } from '../plan/plan.js'
import type * as A from '../syntax/ast.js'
import { isNumericType, type KqlType } from '../types.js'
import { notSupported, UNSUPPORTED_FUNCTIONS, unsupportedGeoReason } from '../unsupported.js'
import { type AggCollector, type BindContext, literal, type RowCtx, ref, visible } from './bind-context.js'
import { didYouMean, resultName } from './names.js'
import { arithmeticType, equatable, orderable } from './typing.js'

const FOLD_RUNTIME: ExprRuntime = {
  ctx: { now: 0n, random: () => 0.5 },
  subqueries: new Map(),
}

const WINDOW_FUNCTIONS = new Set<P.WindowFn>([
  'prev',
  'next',
  'row_number',
  'row_cumsum',
  'row_rank_min',
  'row_rank_dense',
  'row_window_session',
])

/** Whether an expression can be evaluated once at bind time (no rows, no clock, no randomness). */
function isFoldable(e: P.Expr): boolean {
  switch (e.kind) {
    case 'Literal':
      return true
    case 'ColumnRef':
    case 'Window':
    case 'ScalarSubquery':
    case 'InSubquery':
      return false
    case 'Call':
      return e.deterministic && e.args.every(isFoldable)
    case 'Binary':
      return isFoldable(e.left) && isFoldable(e.right)
    case 'Unary':
    case 'Convert':
      return isFoldable(e.operand)
    case 'InList':
      return isFoldable(e.operand) && e.items.every(isFoldable)
    case 'Between':
      return isFoldable(e.operand) && isFoldable(e.low) && isFoldable(e.high)
    case 'Member':
      return isFoldable(e.target) && isFoldable(e.key)
    case 'Pack':
      return e.entries.every((x) => isFoldable(x.value))
  }
}

/** Which type a dynamic operand converts to so the operation yields `result`. */
function numericOperandType(result: KqlType, other: KqlType): KqlType {
  if (result === 'datetime' && other === 'datetime') return 'timespan'
  if (result === 'datetime' || result === 'timespan') return other === 'timespan' || other === 'datetime' ? 'timespan' : result
  return result
}

// -------------------------------------------------------------------------------------------
// Scalar expressions
// -------------------------------------------------------------------------------------------

export function convert(e: P.Expr, to: KqlType, _offset: number): P.Expr {
  if (e.type === to) return e
  if (e.kind === 'Literal') return literal(to, convertValue(to, e.type, e.value))
  return { kind: 'Convert', type: to, operand: e }
}

/** Evaluates an all-constant expression now; keeps the expression if evaluation fails. */
export function fold(e: P.Expr): P.Expr {
  if (e.kind === 'Literal' || !isFoldable(e)) return e
  try {
    const value = compileExpr(e, FOLD_RUNTIME)([], 0, [])
    return literal(e.type, value === undefined ? null : value)
  } catch {
    return e
  }
}

export function bindScalar(binder: BindContext, e: A.Expr, ctx: RowCtx): P.Expr {
  switch (e.kind) {
    case 'Literal':
      return literal(e.type, e.value)
    case 'Name':
      return bindName(binder, e, ctx)
    case 'Paren':
      if (binder.classify(e.expr, ctx.scope, ctx) === 'tabular' && e.expr.kind !== 'Name') {
        throw binder.err(e.start, 'a tabular expression cannot be used as a scalar; wrap it in toscalar()')
      }
      return bindScalar(binder, e.expr, ctx)
    case 'Unary': {
      const operand = bindScalar(binder, e.operand, ctx)
      if (e.op === '+') return operand
      if (!isNumericType(operand.type) && operand.type !== 'timespan' && operand.type !== 'dynamic') {
        throw binder.err(e.start, `unary '-' needs a number or a timespan, got ${operand.type}`)
      }
      return fold({ kind: 'Unary', op: 'negate', operand, type: operand.type })
    }
    case 'Binary':
      return bindBinary(binder, e, ctx)
    case 'In':
      return bindIn(binder, e, ctx)
    case 'Between': {
      const operand = bindScalar(binder, e.left, ctx)
      const low = bindScalar(binder, e.low, ctx)
      let high = bindScalar(binder, e.high, ctx)
      if (operand.type === 'datetime' && low.type === 'datetime' && high.type === 'timespan') {
        high = fold({ kind: 'Binary', op: '+', left: low, right: high, type: 'datetime' })
      }
      if (!orderable(operand.type, low.type) || !orderable(operand.type, high.type)) {
        throw binder.err(e.start, `between cannot compare ${operand.type} with ${low.type} .. ${high.type}`)
      }
      return fold({ kind: 'Between', type: 'bool', negated: e.negated, operand, low, high })
    }
    case 'Member':
      return bindMember(binder, e, ctx)
    case 'Index': {
      const target = bindScalar(binder, e.target, ctx)
      if (target.type !== 'dynamic')
        throw binder.err(e.start, `'${binder.src(e.target).slice(0, 40)}' is ${target.type}; indexing needs a dynamic value`)
      let key = bindScalar(binder, e.index, ctx)
      if (key.type === 'int') key = convert(key, 'long', e.index.start)
      if (key.type !== 'string' && key.type !== 'long')
        throw binder.err(e.index.start, `an index must be a string or an integer, got ${key.type}`)
      return fold({ kind: 'Member', type: 'dynamic', target, key })
    }
    case 'Call':
      return bindCall(binder, e, ctx)
    case 'Star':
      throw binder.err(e.start, "'*' is not allowed here")
    case 'NamedArg':
      throw binder.err(e.start, `named argument '${e.name}' is only allowed in calls of user-defined functions`)
    case 'Pipe':
    case 'Datatable':
    case 'Print':
    case 'Range':
    case 'Union':
      throw binder.err(e.start, 'a tabular expression cannot be used as a scalar; wrap it in toscalar()')
  }
}

export function bindName(binder: BindContext, e: A.NameExpr, ctx: RowCtx): P.Expr {
  const name = e.name
  const idx = ctx.columns.findIndex((c) => c.name === name)
  if (idx >= 0) {
    if (ctx.agg) throw binder.err(e.start, `'${name}' must be used inside an aggregation (summarize aggregates see groups, not rows)`)
    return ref(idx, ctx.columns[idx]!)
  }
  if (ctx.steps?.has(name)) throw binder.err(e.start, `'${name}' is a scan step; use ${name}.Column`)
  const b = ctx.scope.get(name)
  if (b) {
    switch (b.kind) {
      case 'scalar':
        if (b.rowColumns && b.rowColumns !== ctx.columns && b.rowColumns !== ctx.agg?.input.columns) {
          throw binder.err(e.start, `'${name}' depends on the row of its caller and cannot be used in this subquery`, 'unsupported')
        }
        return b.expr
      case 'tabular':
        throw binder.err(e.start, `'${name}' is a table; a scalar is expected here (use toscalar(${name}) for its first value)`)
      case 'function': {
        if (b.lambda.params.every((p) => p.defaultValue)) {
          const v = binder.invoke(b, [], e, ctx, ctx.scope)
          if (v.kind === 'scalar') return v.expr
        }
        throw binder.err(e.start, `'${name}' is a function; call it as ${name}(...)`)
      }
      case 'unset-parameter':
        throw binder.err(
          e.start,
          `query parameter '${name}' has no value (declare query_parameters without a default); give it a default value`,
        )
    }
  }
  if (name === '$left' || name === '$right') throw binder.err(e.start, `${name} can only be used in a join condition`)
  if (binder.tables.has(name))
    throw binder.err(e.start, `'${name}' is a table; a scalar is expected here (use toscalar(${name}) for its first value)`)
  const candidates = [...ctx.columns.filter((c) => !c.hidden).map((c) => c.name), ...ctx.scope.names()]
  const what = ctx.columns.length > 0 ? 'column or variable' : 'name'
  throw binder.err(e.start, `unknown ${what} '${name}'${didYouMean(name, candidates)}`)
}

export function bindMember(binder: BindContext, e: A.MemberExpr, ctx: RowCtx): P.Expr {
  if (e.target.kind === 'Name' && ctx.steps?.has(e.target.name)) {
    const offset = ctx.steps.get(e.target.name)!
    const cols = ctx.stepColumns!
    const i = cols.findIndex((c) => c.name === e.name)
    if (i < 0)
      throw binder.err(
        e.start,
        `scan step '${e.target.name}' has no column '${e.name}'${didYouMean(
          e.name,
          cols.map((c) => c.name),
        )}`,
      )
    return { kind: 'ColumnRef', index: offset + i, name: `${e.target.name}.${e.name}`, type: cols[i]!.type }
  }
  const target = bindScalar(binder, e.target, ctx)
  if (target.type !== 'dynamic') {
    throw binder.err(
      e.start,
      `'${binder.src(e.target).slice(0, 40)}' is ${target.type}; '.${e.name}' needs a dynamic value (use parse_json() or todynamic())`,
    )
  }
  return fold({ kind: 'Member', type: 'dynamic', target, key: literal('string', e.name) })
}

export function bindBinary(binder: BindContext, e: A.BinaryExpr, ctx: RowCtx): P.Expr {
  if (e.left.kind === 'Star') return bindStarPredicate(binder, e, ctx)
  const op = e.op
  const left = bindScalar(binder, e.left, ctx)
  const right = bindScalar(binder, e.right, ctx)
  const lt = left.type
  const rt = right.type
  if (op === 'and' || op === 'or') {
    const l = lt === 'dynamic' ? convert(left, 'bool', e.left.start) : left
    const r = rt === 'dynamic' ? convert(right, 'bool', e.right.start) : right
    if (l.type !== 'bool' || r.type !== 'bool') {
      throw binder.err(e.opStart, `'${op}' needs bool operands, got ${lt} and ${rt}`)
    }
    if (l.kind === 'Literal' && r.kind === 'Literal') return fold({ kind: 'Binary', op, left: l, right: r, type: 'bool' })
    return { kind: 'Binary', op, left: l, right: r, type: 'bool' }
  }
  if (op === '+' || op === '-' || op === '*' || op === '/' || op === '%') {
    const type = arithmeticType(op, lt, rt)
    if (!type) throw binder.err(e.opStart, `the operator '${op}' cannot be applied to ${lt} and ${rt}`)
    let l = left
    let r = right
    if (type !== 'dynamic') {
      if (lt === 'dynamic') l = convert(left, numericOperandType(type, rt), e.left.start)
      if (rt === 'dynamic') r = convert(right, numericOperandType(type, lt), e.right.start)
    }
    return fold({ kind: 'Binary', op, left: l, right: r, type })
  }
  if (op === '==' || op === '!=' || op === '<' || op === '<=' || op === '>' || op === '>=') {
    const ok = op === '==' || op === '!=' ? equatable(lt, rt) : orderable(lt, rt) || (lt === 'string' && rt === 'string')
    if (!ok) throw binder.err(e.opStart, `cannot compare ${lt} with ${rt} using '${op}'`)
    return fold({ kind: 'Binary', op, left, right, type: 'bool' })
  }
  if (op === '=~' || op === '!~') {
    return fold({
      kind: 'Binary',
      op,
      left: toText(left, e.left.start),
      right: toText(right, e.right.start),
      type: 'bool',
    })
  }
  if ((STRING_OPS as readonly string[]).includes(op)) {
    const l = toText(left, e.left.start)
    const r = toText(right, e.right.start)
    if (op === 'matches regex' && r.kind === 'Literal') {
      try {
        compileRegex((r.value ?? '') as string, '', 'matches regex')
      } catch (error) {
        binder.rethrowAt(error, e.right.start)
      }
    }
    return fold({ kind: 'Binary', op: op as P.StringOp, left: l, right: r, type: 'bool' })
  }
  throw binder.err(e.opStart, `unknown operator '${op}'`)
}

/** `* has "x"` and friends: true when any column matches. */
export function bindStarPredicate(binder: BindContext, e: A.BinaryExpr, ctx: RowCtx): P.Expr {
  const right = toText(bindScalar(binder, e.right, ctx), e.right.start)
  if (!(STRING_OPS as readonly string[]).includes(e.op) && e.op !== '==' && e.op !== '=~') {
    throw binder.err(e.start, `'*' can only be used with string operators such as has or contains`)
  }
  const negated = e.op.startsWith('!')
  const positive = (negated ? e.op.slice(1) : e.op) as P.BinaryOp
  let result: P.Expr | undefined
  ctx.columns.forEach((c, i) => {
    if (c.hidden) return
    const test: P.Expr = { kind: 'Binary', op: positive, left: toText(ref(i, c), e.start), right, type: 'bool' }
    result = result ? { kind: 'Binary', op: 'or', left: result, right: test, type: 'bool' } : test
  })
  const any: P.Expr = result ?? literal('bool', false)
  return negated ? { kind: 'Unary', op: 'not', operand: any, type: 'bool' } : any
}

export function toText(e: P.Expr, offset: number): P.Expr {
  return e.type === 'string' ? e : convert(e, 'string', offset)
}

export function bindIn(binder: BindContext, e: A.InExpr, ctx: RowCtx): P.Expr {
  let operand = bindScalar(binder, e.left, ctx)
  const textual = e.op === 'has_any' || e.op === 'has_all' || e.op === 'in~' || e.op === '!in~'
  if (e.items.length === 1 && binder.classify(e.items[0]!, ctx.scope, ctx) === 'tabular') {
    const sub = binder.bindTabular(e.items[0]!, ctx.scope)
    const first = visible(sub.plan.columns)[0]
    if (!first) throw binder.err(e.items[0]!.start, `the table after '${e.op}' has no columns`)
    if (textual) operand = toText(operand, e.left.start)
    return { kind: 'InSubquery', type: 'bool', op: e.op, operand, subquery: sub.plan }
  }
  const items = e.items.map((it) => bindScalar(binder, it, ctx))
  if (textual) {
    operand = toText(operand, e.left.start)
  } else if (operand.type === 'dynamic') {
    const scalarItem = items.find((it) => it.type !== 'dynamic')
    if (scalarItem) operand = convert(operand, scalarItem.type, e.left.start)
  }
  return fold({ kind: 'InList', type: 'bool', op: e.op, operand, items })
}

// -------------------------------------------------------------------------------------------
// Calls
// -------------------------------------------------------------------------------------------

export function argInfo(binder: BindContext, ast: A.Expr, bound: P.Expr): ArgInfo {
  const columnName = resultName(ast)
  return {
    type: bound.type,
    text: binder.src(ast),
    ...(bound.kind === 'Literal' ? { constant: { value: bound.value } } : {}),
    ...(columnName !== undefined ? { columnName } : {}),
  }
}

/**
 * bin_auto(x) with `set query_bin_auto_size=s` and `set query_bin_auto_at=a` (default 0) is
 * bin(x - a, s) + a: the nearest multiple of s below x, shifted so that a bins to itself.
 */
export function binAutoExpr(binder: BindContext, e: A.CallExpr): A.Expr {
  if (e.args.length !== 1) throw binder.err(e.start, 'bin_auto() expects one argument')
  const size = binder.binAuto.size
  if (!size) throw binder.err(e.start, 'bin_auto() needs the bin size: add `set query_bin_auto_size=<size>;` before the query')
  const x = e.args[0]!
  const span = { start: e.start, end: e.end }
  const at = binder.binAuto.at
  const bin = (v: A.Expr): A.Expr => ({ kind: 'Call', name: 'bin', nameEnd: e.nameEnd, args: [v, size], ...span })
  if (!at) return bin(x)
  const shifted: A.Expr = { kind: 'Binary', op: '-', opStart: e.start, left: x, right: at, ...span }
  return { kind: 'Binary', op: '+', opStart: e.start, left: bin(shifted), right: at, ...span }
}

/** A documented function the engine refuses (unsupported.ts): named, with the reason. */
export function refuseIfUnsupported(binder: BindContext, e: A.CallExpr): void {
  const reason = UNSUPPORTED_FUNCTIONS.get(e.name) ?? unsupportedGeoReason(e.name)
  if (reason !== undefined) throw binder.err(e.start, notSupported(`${e.name}()`, reason), 'unsupported')
}

export function bindCall(binder: BindContext, e: A.CallExpr, ctx: RowCtx): P.Expr {
  const name = e.name
  const b = ctx.scope.get(name)
  if (b) {
    if (b.kind === 'function') {
      const v = binder.invoke(b, e.args, e, ctx, ctx.scope)
      if (v.kind !== 'scalar') throw binder.err(e.start, `${name}() returns a table; a scalar is expected here (use toscalar())`)
      return v.expr
    }
    throw binder.err(e.start, `'${name}' is not a function`)
  }
  for (const a of e.args) {
    if (a.kind === 'NamedArg') throw binder.err(a.start, `named arguments are only supported for user-defined functions, not ${name}()`)
  }
  switch (name) {
    case 'not': {
      if (e.args.length !== 1) throw binder.err(e.start, 'not() expects one argument')
      let operand = bindScalar(binder, e.args[0]!, ctx)
      if (operand.type === 'dynamic') operand = convert(operand, 'bool', e.args[0]!.start)
      if (operand.type !== 'bool') throw binder.err(e.args[0]!.start, `not() needs a bool, got ${operand.type}`)
      return fold({ kind: 'Unary', op: 'not', operand, type: 'bool' })
    }
    case 'toscalar': {
      if (e.args.length !== 1) throw binder.err(e.start, 'toscalar() expects one argument')
      const arg = e.args[0]!
      if (binder.classify(arg, ctx.scope, ctx) !== 'tabular') return bindScalar(binder, arg, ctx)
      const sub = binder.bindTabular(arg, ctx.scope)
      const first = visible(sub.plan.columns)[0]
      if (!first) throw binder.err(arg.start, 'toscalar() needs a table with at least one column')
      return { kind: 'ScalarSubquery', type: first.type, plan: sub.plan }
    }
    case 'pack_all': {
      let skip = false
      if (e.args.length > 1) throw binder.err(e.start, 'pack_all() expects at most one argument')
      if (e.args.length === 1) {
        const a = bindScalar(binder, e.args[0]!, { columns: [], scope: ctx.scope })
        if (a.kind !== 'Literal' || typeof a.value !== 'boolean') throw binder.err(e.args[0]!.start, 'pack_all() expects a constant bool')
        skip = a.value
      }
      if (ctx.agg) throw binder.err(e.start, 'pack_all() must be used inside an aggregation here')
      const entries = ctx.columns
        .map((c, i) => ({ c, i }))
        .filter(({ c }) => !c.hidden)
        .map(({ c, i }) => ({ key: c.name, value: ref(i, c) as P.Expr }))
      return { kind: 'Pack', type: 'dynamic', entries, skipNullAndEmpty: skip }
    }
    case 'bag_pack_columns': {
      const entries = e.args.map((a) => {
        const v = bindScalar(binder, a, ctx)
        if (v.kind !== 'ColumnRef') throw binder.err(a.start, 'bag_pack_columns() expects column names')
        return { key: v.name, value: v as P.Expr }
      })
      return { kind: 'Pack', type: 'dynamic', entries, skipNullAndEmpty: false }
    }
    case 'column_ifexists': {
      if (e.args.length !== 2) throw binder.err(e.start, 'column_ifexists() expects a column name and a default value')
      const nameValue = bindScalar(binder, e.args[0]!, { columns: [], scope: ctx.scope })
      if (nameValue.kind !== 'Literal' || typeof nameValue.value !== 'string')
        throw binder.err(e.args[0]!.start, 'column_ifexists() expects the column name as a string constant')
      const idx = ctx.columns.findIndex((c) => c.name === nameValue.value)
      if (idx >= 0) return ref(idx, ctx.columns[idx]!)
      return bindScalar(binder, e.args[1]!, ctx)
    }
    case 'column_names_of': {
      const t = e.args[0]
      if (!t || e.args.length !== 1) throw binder.err(e.start, 'column_names_of() expects one table')
      const v = binder.bindTabular(t, ctx.scope)
      return literal(
        'dynamic',
        visible(v.plan.columns).map((c) => c.name),
      )
    }
    case 'bin_auto':
      return bindScalar(binder, binAutoExpr(binder, e), ctx)
    case 'materialize':
    case 'table':
    case 'view':
      throw binder.err(e.start, `${name}() returns a table; a scalar is expected here`)
    default:
      break
  }
  if (WINDOW_FUNCTIONS.has(name as P.WindowFn)) return bindWindow(binder, name as P.WindowFn, e, ctx)
  if (name === 'ingestion_time') {
    if (e.args.length > 0) throw binder.err(e.start, 'ingestion_time() takes no arguments')
    // the documented way to read the hidden _ingested_at: the row's ingestion time while the row
    // comes from a stored table, else null (as Kusto, where a table records no ingestion time)
    const at = ctx.columns.findIndex((c) => c.name === '_ingested_at' && c.hidden === true && c.type === 'datetime')
    return at >= 0 ? ref(at, ctx.columns[at]!) : { kind: 'Literal', type: 'datetime', value: null }
  }
  const aggregate = binder.lib.lookupAggregate(name)
  const scalar = binder.lib.lookupScalar(name)
  if (aggregate && (ctx.agg || !scalar)) {
    if (!ctx.agg) {
      throw binder.err(e.start, `${name}() is an aggregation: use it in summarize, make-series or top-nested`)
    }
    return bindAggregate(binder, e, aggregate, ctx.agg)
  }
  if (!scalar) {
    refuseIfUnsupported(binder, e)
    const candidates = [
      ...binder.lib.scalarNames(),
      ...(ctx.agg ? binder.lib.aggregateNames() : []),
      ...ctx.scope.names(),
      'not',
      'toscalar',
      'pack_all',
      'column_ifexists',
      ...WINDOW_FUNCTIONS,
    ]
    throw binder.err(e.start, `unknown function '${name}'${didYouMean(name, candidates)}`)
  }
  const args: P.Expr[] = []
  const infos: ArgInfo[] = []
  for (const a of e.args) {
    if (a.kind === 'Star') throw binder.err(a.start, `'*' is not a valid argument of ${name}()`)
    if (binder.classify(a, ctx.scope, ctx) === 'tabular' && a.kind !== 'Name') {
      throw binder.err(a.start, `${name}() expects scalar arguments; wrap the table in toscalar()`)
    }
    const bound = bindScalar(binder, a, ctx)
    args.push(bound)
    infos.push(argInfo(binder, a, bound))
  }
  let impl: P.Call['impl']
  try {
    impl = scalar.bind(infos)
  } catch (error) {
    binder.rethrowAt(error, e.start)
  }
  const call: P.Call = { kind: 'Call', type: impl.type, name, args, impl, deterministic: scalar.deterministic !== false }
  return fold(call)
}

export function bindAggregate(binder: BindContext, e: A.CallExpr, fn: AggregateFunction, agg: AggCollector): P.Expr {
  let star = false
  const args: P.Expr[] = []
  const infos: ArgInfo[] = []
  for (const a of e.args) {
    if (a.kind === 'Star') {
      star = true
      continue
    }
    const bound = bindScalar(binder, a, agg.input)
    args.push(bound)
    infos.push(argInfo(binder, a, bound))
  }
  let impl: P.AggregateCall['impl']
  const inputColumns = visible(agg.input.columns)
  try {
    impl = fn.bind(infos, { star, inputColumns: inputColumns.map((c) => ({ name: c.name, type: c.type })) })
  } catch (error) {
    binder.rethrowAt(error, e.start)
  }
  // `*`: the accumulator receives every input column's value after the explicit arguments
  if (star) for (const c of inputColumns) args.push(ref(agg.input.columns.indexOf(c), c))
  if (impl.outputs.length === 0) throw binder.err(e.start, `${e.name}() produced no columns`)
  const outputs = impl.outputs.map((o) => ({ name: o.name, type: o.type }))
  const index = agg.base + agg.width
  agg.calls.push({ name: e.name, args, star, impl, outputs })
  agg.width += outputs.length
  return { kind: 'ColumnRef', index, name: outputs[0]!.name, type: outputs[0]!.type }
}

export function bindWindow(binder: BindContext, fn: P.WindowFn, e: A.CallExpr, ctx: RowCtx): P.Expr {
  const args = e.args.map((a) => bindScalar(binder, a, ctx))
  const arity = (min: number, max: number): void => {
    if (args.length < min || args.length > max) {
      throw binder.err(
        e.start,
        `${fn}() expects ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${args.length}`,
      )
    }
  }
  const boolArg = (i: number): void => {
    const a = args[i]
    if (a && a.type !== 'bool') throw binder.err(e.args[i]!.start, `${fn}(): argument ${i + 1} must be bool, got ${a.type}`)
  }
  switch (fn) {
    case 'prev':
    case 'next': {
      arity(1, 3)
      const value = args[0]!
      if (args[1]) {
        if (args[1].kind !== 'Literal' || typeof args[1].value !== 'number' || args[1].value < 0) {
          throw binder.err(e.args[1]!.start, `${fn}(): the offset must be a constant non-negative integer`)
        }
      }
      const out = [...args]
      if (out[2]) out[2] = binder.convertArgument(out[2], value.type, e.args[2]!.start, `${fn}(): the default`)
      return { kind: 'Window', fn, args: out, type: value.type }
    }
    case 'row_number': {
      arity(0, 2)
      if (args[0] && !isNumericType(args[0].type)) throw binder.err(e.args[0]!.start, 'row_number(): the start must be a number')
      boolArg(1)
      return { kind: 'Window', fn, args, type: 'long' }
    }
    case 'row_cumsum': {
      arity(1, 2)
      boolArg(1)
      const t = args[0]!.type
      if (!isNumericType(t) && t !== 'timespan') throw binder.err(e.args[0]!.start, `row_cumsum() needs a number or a timespan, got ${t}`)
      return { kind: 'Window', fn, args, type: t === 'decimal' ? 'real' : t }
    }
    case 'row_rank_min':
    case 'row_rank_dense':
      arity(1, 2)
      boolArg(1)
      return { kind: 'Window', fn, args, type: 'long' }
    case 'row_window_session': {
      arity(3, 4)
      boolArg(3)
      if (args[0]!.type !== 'datetime') throw binder.err(e.args[0]!.start, `row_window_session() needs a datetime, got ${args[0]!.type}`)
      if (args[1]!.type !== 'timespan' || args[2]!.type !== 'timespan')
        throw binder.err(e.start, 'row_window_session(): the distances must be timespans')
      return { kind: 'Window', fn, args, type: 'datetime' }
    }
  }
}
