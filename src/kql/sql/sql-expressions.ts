/**
 * @module
 * Plan expressions → SQL, exactly as the in-memory evaluator (exec/compile-expr.ts) computes them,
 * or not at all. Every translation keeps Kusto's three-valued results: a comparison with one null
 * side is false for `==` and true for `!=` (null only when both are null), NaN compares like null
 * for `<`, strings are never null. Anything a dialect cannot express exactly returns undefined and
 * stays in memory. Literals always become bound parameters (`SqlContext.bind`).
 */
import type * as P from '../plan/plan.js'
import type { KqlType, KqlValue } from '../types.js'
import type { SqlDialect, StringMatchOp } from './sql-dialect.js'

/** A SQL value of a KQL type. `nullable: false` means SQL never yields NULL for it. */
export interface SqlScalar {
  readonly sql: string
  readonly type: KqlType
  readonly nullable: boolean
  /** PostgreSQL: may hold NaN (real columns and real arithmetic). */
  readonly maybeNaN?: boolean
  /**
   * SQL NULL here stands for NaN (SQLite's AVG of no values): only passed through, never
   * computed with.
   */
  readonly nullIsNaN?: boolean
}

export interface SqlContext {
  readonly dialect: SqlDialect
  /** A bound parameter for a literal: returns the dialect's SQL for it. */
  bind(type: KqlType, value: KqlValue): string
  /** now() of the run (a parameter filled in at execution). */
  now(): string
}

const NUMERIC: ReadonlySet<KqlType> = new Set(['int', 'long', 'real', 'decimal'])
const isNum = (t: KqlType): boolean => NUMERIC.has(t)
const isReal = (t: KqlType): boolean => t === 'real' || t === 'decimal'
const isTicks = (t: KqlType): boolean => t === 'datetime' || t === 'timespan'
const isIntegral = (t: KqlType): boolean => t === 'int' || t === 'long'

/** Ticks of 0001-01-01 relative to the Unix epoch: bin() aligns datetimes there (function library). */
const DATETIME_ORIGIN = -621355968000000000n
const TICKS_PER_DAY = 864000000000n

/** Operand classes that compare with each other the same way in SQL and in memory. */
function comparable(a: KqlType, b: KqlType): boolean {
  if (isNum(a) && isNum(b)) return true
  if (isTicks(a) && isTicks(b)) return true
  return a === b && (a === 'bool' || a === 'string')
}

function literalOf(e: P.Expr): KqlValue | undefined {
  return e.kind === 'Literal' ? e.value : undefined
}

export function translateExpr(e: P.Expr, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  switch (e.kind) {
    case 'Literal':
      return literal(e, cx)
    case 'ColumnRef': {
      const c = inputs[e.index]
      if (!c || c.nullIsNaN || c.type !== e.type) return undefined
      return c
    }
    case 'Convert':
      return convert(e, inputs, cx)
    case 'Unary':
      return unary(e, inputs, cx)
    case 'Binary':
      return binary(e, inputs, cx)
    case 'InList':
      return inList(e, inputs, cx)
    case 'Between':
      return between(e, inputs, cx)
    case 'Call':
      return call(e, inputs, cx)
    // dynamic values, windows and subqueries stay in memory
    case 'InSubquery':
    case 'Member':
    case 'Pack':
    case 'Window':
    case 'ScalarSubquery':
      return undefined
  }
}

function literal(e: P.Literal, cx: SqlContext): SqlScalar | undefined {
  const v = e.value
  const t = e.type
  if (t === 'dynamic' || t === 'guid') return undefined
  if (v === null || v === undefined) {
    if (t === 'string') return { sql: cx.bind('string', ''), type: t, nullable: false }
    return { sql: cx.dialect.nullOf(t), type: t, nullable: true }
  }
  switch (t) {
    case 'bool':
      if (typeof v !== 'boolean') return undefined
      break
    case 'int':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return undefined
      break
    case 'long':
      // canonical longs (long.ts): a bigint beyond 2^53 binds as an exact int64
      if (!(typeof v === 'number' && Number.isSafeInteger(v)) && typeof v !== 'bigint') return undefined
      break
    case 'real':
    case 'decimal':
      if (typeof v !== 'number' || !Number.isFinite(v)) return undefined
      break
    case 'string':
      if (typeof v !== 'string') return undefined
      break
    case 'datetime':
    case 'timespan':
      if (typeof v !== 'bigint') return undefined
      break
  }
  return { sql: cx.bind(t, v), type: t, nullable: false }
}

function convert(e: P.Convert, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  const x = translateExpr(e.operand, inputs, cx)
  if (!x) return undefined
  const from = e.operand.type
  const to = e.type
  if (from === to || (isReal(from) && isReal(to)) || (from === 'int' && to === 'long')) return { ...x, type: to }
  if (isIntegral(from) && isReal(to)) return { sql: cx.dialect.toReal(x.sql), type: to, nullable: x.nullable }
  return undefined
}

function unary(e: P.Unary, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  const x = translateExpr(e.operand, inputs, cx)
  if (!x) return undefined
  if (e.op === 'not') return x.type === 'bool' ? { sql: `(NOT ${x.sql})`, type: 'bool', nullable: x.nullable } : undefined
  if (!(isNum(x.type) || isTicks(x.type)) || x.type !== e.type) return undefined
  return { sql: `(-${x.sql})`, type: e.type, nullable: x.nullable, ...(x.maybeNaN ? { maybeNaN: true } : {}) }
}

function bool(cx: SqlContext, value: boolean): SqlScalar {
  return { sql: value ? cx.dialect.trueSql : cx.dialect.falseSql, type: 'bool', nullable: false }
}

function binary(e: P.Binary, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  switch (e.op) {
    case 'and':
    case 'or': {
      const a = translateExpr(e.left, inputs, cx)
      const b = a && translateExpr(e.right, inputs, cx)
      if (!a || !b || a.type !== 'bool' || b.type !== 'bool') return undefined
      // SQL's three-valued AND/OR is Kleene logic, as the evaluator's
      return { sql: `(${a.sql} ${e.op === 'and' ? 'AND' : 'OR'} ${b.sql})`, type: 'bool', nullable: a.nullable || b.nullable }
    }
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
      return arithmetic(e, inputs, cx)
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return comparison(e.op, e.left, e.right, inputs, cx)
    case '=~':
    case '!~': {
      const negated = e.op === '!~'
      return stringOp('=~', negated, e.left, e.right, inputs, cx)
    }
    default: {
      const negated = e.op.startsWith('!')
      const base = negated ? e.op.slice(1) : e.op
      if (base === 'like' || base === 'like_cs' || base === 'matches regex') return undefined
      return stringOp(base as StringMatchOp, negated, e.left, e.right, inputs, cx)
    }
  }
}

function arithmetic(e: P.Binary, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  const a = translateExpr(e.left, inputs, cx)
  const b = a && translateExpr(e.right, inputs, cx)
  if (!a || !b) return undefined
  const op = e.op
  const nullable = a.nullable || b.nullable
  const d = cx.dialect
  // long arithmetic: exact int64 on both sides; leaving int64 refuses (the evaluator wraps around)
  // (an int result wraps to 32 bits in memory, so it stays there)
  if (e.type === 'long' && isIntegral(a.type) && isIntegral(b.type)) {
    if (op === '+' || op === '-' || op === '*')
      return { sql: d.guardLongResult(`(${a.sql} ${op} ${b.sql})`, { a: a.sql, op, b: b.sql }), type: 'long', nullable }
    if (op === '/') return { sql: d.guardLongResult(d.integerDivide(a.sql, b.sql)), type: 'long', nullable: true }
    return undefined
  }
  if (isReal(e.type) && isNum(a.type) && isNum(b.type) && (isReal(a.type) || isReal(b.type))) {
    let sql: string | undefined
    if (op === '+' || op === '-' || op === '*') sql = `(${a.sql} ${op} ${b.sql})`
    else if (op === '/') sql = d.realDivide(a.sql, b.sql, !b.nullable)
    if (sql === undefined) return undefined
    const notNull = [a, b]
      .filter((x) => x.nullable)
      .map((x) => `${x.sql} IS NOT NULL`)
      .join(' AND ')
    return { sql: d.guardRealResult(sql, notNull === '' ? undefined : notNull), type: e.type, nullable, maybeNaN: d.hasNaN }
  }
  // datetime/timespan sums and differences are exact int64 arithmetic on ticks
  if (isTicks(e.type) && isTicks(a.type) && isTicks(b.type) && (op === '+' || op === '-')) {
    return { sql: `(${a.sql} ${op} ${b.sql})`, type: e.type, nullable }
  }
  return undefined
}

/** Comparison with the evaluator's null and NaN rules (see the module comment). */
function comparison(
  op: '==' | '!=' | '<' | '<=' | '>' | '>=',
  left: P.Expr,
  right: P.Expr,
  inputs: readonly SqlScalar[],
  cx: SqlContext,
): SqlScalar | undefined {
  const a0 = translateExpr(left, inputs, cx)
  const b0 = a0 && translateExpr(right, inputs, cx)
  if (!a0 || !b0 || !comparable(a0.type, b0.type)) return undefined
  const d = cx.dialect
  // a long against a real compares as doubles, as .NET (and the evaluator) convert the long; SQLite
  // would compare the exact values (9007199254740993 == 9007199254740992.0 is false there)
  const asReal = (x: SqlScalar, other: SqlScalar): SqlScalar =>
    isIntegral(x.type) && isReal(other.type) ? { ...x, sql: d.toReal(x.sql), type: 'real' } : x
  const a = asReal(a0, b0)
  const b = asReal(b0, a0)
  if (a.type === 'string') {
    if (op !== '==' && op !== '!=') return undefined // ordinal UTF-16 order: see stringSortKey
    return { sql: `(${a.sql} ${op === '==' ? '=' : '<>'} ${b.sql})`, type: 'bool', nullable: false }
  }
  const nanA = d.hasNaN && a.maybeNaN === true
  const nanB = d.hasNaN && b.maybeNaN === true
  const sqlOp = op === '==' ? '=' : op === '!=' ? '<>' : op
  if (op === '==' || op === '!=') {
    let core = `${a.sql} ${sqlOp} ${b.sql}`
    // SQL calls NaN equal to NaN; the evaluator does not
    if (nanA && nanB) core = op === '==' ? `(${core} AND NOT ${d.isNaN(a.sql)})` : `(${core} OR ${d.isNaN(a.sql)})`
    else core = `(${core})`
    if (!a.nullable && !b.nullable) return { sql: core, type: 'bool', nullable: false }
    const oneNull = op === '==' ? d.falseSql : d.trueSql
    const whenOne = `COALESCE(${core}, ${oneNull})`
    if (a.nullable && b.nullable) {
      return {
        sql: `(CASE WHEN ${a.sql} IS NULL AND ${b.sql} IS NULL THEN ${d.nullOf('bool')} ELSE ${whenOne} END)`,
        type: 'bool',
        nullable: true,
      }
    }
    return { sql: whenOne, type: 'bool', nullable: false }
  }
  const core = `(${a.sql} ${sqlOp} ${b.sql})`
  const nanTests = [...(nanA ? [d.isNaN(a.sql)] : []), ...(nanB ? [d.isNaN(b.sql)] : [])]
  // NaN orders above every number in SQL; the evaluator answers null
  const sql = nanTests.length ? `(CASE WHEN ${nanTests.join(' OR ')} THEN ${d.nullOf('bool')} ELSE ${core} END)` : core
  return { sql, type: 'bool', nullable: a.nullable || b.nullable || nanTests.length > 0 }
}

function stringOp(
  op: StringMatchOp,
  negated: boolean,
  left: P.Expr,
  right: P.Expr,
  inputs: readonly SqlScalar[],
  cx: SqlContext,
): SqlScalar | undefined {
  if (left.type !== 'string' || right.kind !== 'Literal' || right.type !== 'string') return undefined
  const needle = (right.value ?? '') as string
  const text = translateExpr(left, inputs, cx)
  if (!text || text.nullable) return undefined
  let sql: string | undefined
  // every operator but =~ matches an empty needle (includes(''), startsWith(''), an empty term)
  if (needle === '' && op !== '=~') sql = cx.dialect.trueSql
  else sql = cx.dialect.stringMatch(op, text.sql, needle, (v) => cx.bind('string', v))
  if (sql === undefined) return undefined
  return { sql: negated ? `(NOT ${sql})` : sql, type: 'bool', nullable: false }
}

function inList(e: P.InList, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  const x = translateExpr(e.operand, inputs, cx)
  if (!x) return undefined
  const items: { readonly type: KqlType; readonly value: KqlValue }[] = []
  for (const item of e.items) {
    if (item.kind !== 'Literal') return undefined
    if (item.type === 'dynamic') {
      // a literal array contributes its elements (plain strings only)
      if (!Array.isArray(item.value)) return undefined
      for (const el of item.value) {
        if (typeof el !== 'string') return undefined
        items.push({ type: 'string', value: el })
      }
    } else {
      items.push({ type: item.type, value: item.value })
    }
  }
  const d = cx.dialect
  const bindText = (s: string): string => cx.bind('string', s)
  if (e.op === 'has_any' || e.op === 'has_all') {
    if (x.type !== 'string' || items.some((i) => i.type !== 'string')) return undefined
    const all = e.op === 'has_all'
    if (items.length === 0) return bool(cx, all)
    const parts: string[] = []
    for (const item of items) {
      const term = (item.value ?? '') as string
      const p = term === '' ? d.trueSql : d.stringMatch('has', x.sql, term, bindText)
      if (p === undefined) return undefined
      parts.push(p)
    }
    return { sql: `(${parts.join(all ? ' AND ' : ' OR ')})`, type: 'bool', nullable: false }
  }
  const negated = e.op === '!in' || e.op === '!in~'
  if (e.op === 'in~' || e.op === '!in~') {
    if (x.type !== 'string' || items.some((i) => i.type !== 'string')) return undefined
    if (items.length === 0) return bool(cx, negated)
    const sql = d.inIgnoreCase(
      x.sql,
      items.map((i) => (i.value ?? '') as string),
      bindText,
    )
    if (sql === undefined) return undefined
    return { sql: negated ? `(NOT ${sql})` : sql, type: 'bool', nullable: false }
  }
  // numbers with numbers; strings, bools, datetimes and timespans only with their own type
  const same = (t: KqlType): boolean => (isNum(x.type) && isNum(t)) || t === x.type
  if (x.type === 'dynamic' || x.type === 'guid' || !items.every((i) => same(i.type))) return undefined
  // longs among reals compare as doubles, as == does (see comparison)
  const doubles = isNum(x.type) && (isReal(x.type) || items.some((i) => isReal(i.type)))
  const operand = doubles && isIntegral(x.type) ? d.toReal(x.sql) : x.sql
  const bound: string[] = []
  for (const item of items) {
    // a null item never matches a value (a null operand is "not in" anything); strings have no null
    let value = item.value
    if (value === null || value === undefined) {
      if (x.type !== 'string') continue
      value = ''
    }
    const asDouble = doubles && isIntegral(item.type)
    const lit = literal({ kind: 'Literal', type: asDouble ? 'real' : item.type, value: asDouble ? Number(value) : value }, cx)
    if (!lit) return undefined
    bound.push(lit.sql)
  }
  if (bound.length === 0) return bool(cx, negated)
  const inSql = `${operand} ${negated ? 'NOT IN' : 'IN'} (${bound.join(', ')})`
  if (!x.nullable) return { sql: `(${inSql})`, type: 'bool', nullable: false }
  return { sql: negated ? `(${x.sql} IS NULL OR ${inSql})` : `(${x.sql} IS NOT NULL AND ${inSql})`, type: 'bool', nullable: false }
}

function between(e: P.Between, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  const x = translateExpr(e.operand, inputs, cx)
  const lo = x && translateExpr(e.low, inputs, cx)
  const hi = lo && translateExpr(e.high, inputs, cx)
  if (!x || !lo || !hi || lo.nullable || hi.nullable) return undefined
  // datetime between (datetime .. datetime), numbers between numbers; nothing mixed
  const ok = (t: KqlType): boolean => (isNum(x.type) && isNum(t)) || (isTicks(x.type) && t === x.type)
  if (!ok(lo.type) || !ok(hi.type) || lo.maybeNaN || hi.maybeNaN) return undefined
  const d = cx.dialect
  // longs among reals compare as doubles, as == does (see comparison)
  const real = (v: SqlScalar): string => (isIntegral(v.type) && [x, lo, hi].some((o) => isReal(o.type)) ? d.toReal(v.sql) : v.sql)
  let sql = `(${real(x)} >= ${real(lo)} AND ${real(x)} <= ${real(hi)})`
  if (d.hasNaN && x.maybeNaN) sql = `(CASE WHEN ${d.isNaN(x.sql)} THEN ${d.nullOf('bool')} ELSE ${sql} END)`
  return { sql: e.negated ? `(NOT ${sql})` : sql, type: 'bool', nullable: x.nullable || (d.hasNaN && x.maybeNaN === true) }
}

/**
 * floor((x - origin) / size) * size + origin on int64 ticks or integers, for a constant size > 0,
 * without division: x - ((x % size + size) % size) (SQL's % keeps the dividend's sign).
 */
function binIntegral(x: string, size: string, origin: bigint, cx: SqlContext, type: KqlType): string {
  const shifted = origin === 0n ? x : `(${x} - ${cx.bind(type === 'datetime' ? 'timespan' : type, origin)})`
  const aligned = `(${shifted} - ((${shifted} % ${size} + ${size}) % ${size}))`
  return origin === 0n ? aligned : `(${aligned} + ${cx.bind('timespan', origin)})`
}

function call(e: P.Call, inputs: readonly SqlScalar[], cx: SqlContext): SqlScalar | undefined {
  const d = cx.dialect
  const arg = (i: number): SqlScalar | undefined => {
    const a = e.args[i]
    return a ? translateExpr(a, inputs, cx) : undefined
  }
  switch (e.name) {
    case 'now':
      if (e.args.length !== 0) return undefined
      return { sql: cx.now(), type: 'datetime', nullable: false }
    case 'ago': {
      const x = arg(0)
      if (e.args.length !== 1 || !x || x.type !== 'timespan') return undefined
      return { sql: `(${cx.now()} - ${x.sql})`, type: 'datetime', nullable: x.nullable }
    }
    case 'bin':
    case 'floor': {
      if (e.args.length !== 2) return undefined
      const x = arg(0)
      const sizeValue = literalOf(e.args[1]!)
      const size = arg(1)
      if (!x || !size || sizeValue === null || sizeValue === undefined) return undefined
      if (isTicks(e.type) && x.type === e.type && typeof sizeValue === 'bigint' && e.args[1]!.type === 'timespan') {
        if (sizeValue <= 0n) return undefined
        // datetimes align to 0001-01-01; a size that divides that offset (any divisor of a day)
        // gives the same bins as aligning to the epoch, with simpler SQL
        const origin = e.type === 'datetime' && DATETIME_ORIGIN % sizeValue !== 0n ? DATETIME_ORIGIN : 0n
        return { sql: binIntegral(x.sql, size.sql, origin, cx, e.type), type: e.type, nullable: x.nullable }
      }
      if (isIntegral(e.type) && isIntegral(x.type) && isIntegral(e.args[1]!.type) && typeof sizeValue === 'number' && sizeValue > 0) {
        return { sql: binIntegral(x.sql, size.sql, 0n, cx, 'long'), type: e.type, nullable: x.nullable }
      }
      if (isReal(e.type) && isNum(x.type) && isNum(e.args[1]!.type) && typeof sizeValue === 'number' && sizeValue > 0) {
        const real = isReal(x.type) ? x.sql : d.toReal(x.sql)
        const sizeReal = isReal(e.args[1]!.type) ? size.sql : d.toReal(size.sql)
        return {
          sql: `(floor(${real} / ${sizeReal}) * ${sizeReal})`,
          type: e.type,
          nullable: x.nullable,
          ...(x.maybeNaN ? { maybeNaN: true } : {}),
        }
      }
      return undefined
    }
    case 'startofday': {
      const x = arg(0)
      if (e.args.length !== 1 || !x || x.type !== 'datetime') return undefined
      // days divide the 0001-01-01 offset: epoch-aligned days are the same days
      return { sql: binIntegral(x.sql, cx.bind('timespan', TICKS_PER_DAY), 0n, cx, 'datetime'), type: 'datetime', nullable: x.nullable }
    }
    case 'isnull':
    case 'isnotnull':
    case 'isempty':
    case 'isnotempty': {
      const x = arg(0)
      if (e.args.length !== 1 || !x || x.type === 'dynamic' || x.type === 'guid') return undefined
      const positive = e.name === 'isnull' || e.name === 'isempty'
      let sql: string
      if (x.type === 'string') {
        // strings are never null; "" is empty
        if (e.name === 'isnull' || e.name === 'isnotnull') return bool(cx, e.name === 'isnotnull')
        sql = `(${x.sql} = ${cx.bind('string', '')})`
      } else {
        sql = `(${x.sql} IS NULL)`
      }
      return { sql: positive ? sql : `(NOT ${sql})`, type: 'bool', nullable: false }
    }
    case 'not': {
      const x = arg(0)
      if (e.args.length !== 1 || !x || x.type !== 'bool') return undefined
      return { sql: `(NOT ${x.sql})`, type: 'bool', nullable: x.nullable }
    }
    case 'iff':
    case 'iif': {
      if (e.args.length !== 3) return undefined
      const c = arg(0)
      const a = arg(1)
      const b = arg(2)
      if (!c || !a || !b || c.type !== 'bool' || a.type !== e.type || b.type !== e.type || e.type === 'dynamic') return undefined
      // only a true condition takes the first branch (null and false take the second), as CASE does
      return {
        sql: `(CASE WHEN ${c.sql} THEN ${a.sql} ELSE ${b.sql} END)`,
        type: e.type,
        nullable: a.nullable || b.nullable,
        ...(a.maybeNaN || b.maybeNaN ? { maybeNaN: true } : {}),
      }
    }
    case 'strcat': {
      if (e.args.length < 1) return undefined
      const parts: string[] = []
      for (let i = 0; i < e.args.length; i++) {
        const a = arg(i)
        if (a?.type !== 'string' || a.nullable) return undefined
        parts.push(a.sql)
      }
      return { sql: parts.length === 1 ? parts[0]! : `(${parts.join(' || ')})`, type: 'string', nullable: false }
    }
    case 'todouble':
    case 'toreal': {
      const x = arg(0)
      if (e.args.length !== 1 || !x || !isNum(x.type)) return undefined
      return isReal(x.type) ? { ...x, type: 'real' } : { sql: d.toReal(x.sql), type: 'real', nullable: x.nullable }
    }
    default:
      return undefined
  }
}

/** Whether a column of this type can be a GROUP BY / DISTINCT key with the evaluator's equality. */
export function groupable(t: KqlType): boolean {
  return t !== 'dynamic'
}
