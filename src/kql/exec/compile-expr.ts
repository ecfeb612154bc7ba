/**
 * @module
 * Compiles plan expressions into closures over positional rows. Type dispatch happens once at
 * compile time, so the per-row work is the operation itself (design §12: execution speed).
 */

import type { EvalContext } from '../functions/function-types.js'
import { compileRegex } from '../functions/regex.js'
import { convertValue, toDynamic, valueToString } from '../functions/value-conversions.js'
import { KqlError } from '../kql-error.js'
import { canonLong, isLongValue, type Long, longAdd, longDiv, longFromDouble, longMod, longMul, longNeg, longSub } from '../long.js'
import type * as P from '../plan/plan.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import {
  compositeKey,
  dynamicEquals,
  equalsIgnoreCase,
  has,
  hasCs,
  hasPrefix,
  hasSuffix,
  hasTermRegex,
  keyOf,
  likePattern,
} from './value-ops.js'

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

/** .NET ticks between 0001-01-01 and the Unix epoch (datetime % timespan is computed on .NET ticks). */
const TICKS_0001 = 621355968000000000n

const isNum = (t: KqlType): boolean => t === 'int' || t === 'long' || t === 'real' || t === 'decimal'
const isTicks = (t: KqlType): boolean => t === 'datetime' || t === 'timespan'

export function compileExpr(e: P.Expr, rt: ExprRuntime): CompiledExpr {
  switch (e.kind) {
    case 'Literal': {
      const v = e.value
      return () => v
    }
    case 'ColumnRef': {
      const i = e.index
      return (row) => row[i] as KqlValue
    }
    case 'Call':
      return compileCall(e, rt)
    case 'Binary':
      return compileBinary(e, rt)
    case 'Unary':
      return compileUnary(e, rt)
    case 'InList':
      return compileInList(e, rt)
    case 'InSubquery': {
      const sub = rt.subqueries.get(e)
      if (sub?.kind !== 'rows') throw new KqlError('runtime', 'internal error: subquery of in() was not evaluated')
      const items: P.Expr[] = sub.values.map((value) => ({ kind: 'Literal', type: e.subquery.columns[0]?.type ?? 'dynamic', value }))
      return compileInList({ kind: 'InList', type: 'bool', op: e.op, operand: e.operand, items }, rt)
    }
    case 'Between':
      return compileBetween(e, rt)
    case 'Member':
      return compileMember(e, rt)
    case 'Pack':
      return compilePack(e, rt)
    case 'Convert': {
      const from = e.operand.type
      const to = e.type
      const f = compileExpr(e.operand, rt)
      if (from === to) return f
      return (row, i, rows) => convertValue(to, from, f(row, i, rows))
    }
    case 'Window':
      return compileWindow(e, rt)
    case 'ScalarSubquery': {
      const sub = rt.subqueries.get(e)
      if (sub?.kind !== 'scalar') throw new KqlError('runtime', 'internal error: toscalar() was not evaluated')
      const v = sub.value
      return () => v
    }
  }
}

/** Closures of shared calls, per runtime: every reference reuses one per-row memo. */
const SHARED = new WeakMap<ExprRuntime, Map<P.Call, CompiledExpr>>()

function compileCall(e: P.Call, rt: ExprRuntime): CompiledExpr {
  if (!e.shared) return compileCallUncached(e, rt)
  let byNode = SHARED.get(rt)
  if (!byNode) {
    byNode = new Map()
    SHARED.set(rt, byNode)
  }
  const existing = byNode.get(e)
  if (existing) return existing
  const inner = compileCallUncached(e, rt)
  let lastRow: Row | undefined
  let lastIndex = -1
  let lastValue: KqlValue = null
  const memo: CompiledExpr = (row, i, rows) => {
    if (row === lastRow && i === lastIndex) return lastValue
    lastValue = inner(row, i, rows)
    lastRow = row
    lastIndex = i
    return lastValue
  }
  byNode.set(e, memo)
  return memo
}

function compileCallUncached(e: P.Call, rt: ExprRuntime): CompiledExpr {
  const args = e.args.map((a) => compileExpr(a, rt))
  const impl = e.impl.evaluate
  const ctx = rt.ctx
  switch (args.length) {
    case 0:
      return () => impl([], ctx)
    case 1: {
      const a0 = args[0]!
      return (row, i, rows) => impl([a0(row, i, rows)], ctx)
    }
    case 2: {
      const a0 = args[0]!
      const a1 = args[1]!
      return (row, i, rows) => impl([a0(row, i, rows), a1(row, i, rows)], ctx)
    }
    default:
      return (row, i, rows) => {
        const values = new Array<KqlValue>(args.length)
        for (let k = 0; k < args.length; k++) values[k] = args[k]!(row, i, rows)
        return impl(values, ctx)
      }
  }
}

function compileUnary(e: P.Unary, rt: ExprRuntime): CompiledExpr {
  const f = compileExpr(e.operand, rt)
  if (e.op === 'not') {
    return (row, i, rows) => {
      const v = f(row, i, rows)
      return v === null || v === undefined ? null : !v
    }
  }
  if (e.type === 'long') {
    return (row, i, rows) => {
      const v = f(row, i, rows)
      return isLongValue(v) ? longNeg(v) : null
    }
  }
  return (row, i, rows) => {
    const v = f(row, i, rows)
    if (v === null || v === undefined) return null
    if (typeof v === 'bigint') return -v
    if (typeof v === 'number') return -v
    return null
  }
}

// ---------------------------------------------------------------------------------------------
// Binary operators
// ---------------------------------------------------------------------------------------------

function compileBinary(e: P.Binary, rt: ExprRuntime): CompiledExpr {
  const L = compileExpr(e.left, rt)
  const R = compileExpr(e.right, rt)
  switch (e.op) {
    case 'and':
      return (row, i, rows) => {
        const a = L(row, i, rows)
        if (a === false) return false
        const b = R(row, i, rows)
        if (b === false) return false
        if (a === null || a === undefined || b === null || b === undefined) return null
        return true
      }
    case 'or':
      return (row, i, rows) => {
        const a = L(row, i, rows)
        if (a === true) return true
        const b = R(row, i, rows)
        if (b === true) return true
        if (a === null || a === undefined || b === null || b === undefined) return null
        return false
      }
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
      return compileArithmetic(e.op, e.left.type, e.right.type, e.type, L, R)
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
    case '=~':
    case '!~':
      return compileComparison(e.op, e.left.type, e.right.type, L, R)
    default:
      return compileStringOp(e.op, e.right, L, R)
  }
}

function numberOf(t: KqlType, v: KqlValue): number | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  if (typeof v === 'boolean') return v ? 1 : 0
  if (t === 'dynamic' || t === 'string') {
    if (typeof v === 'string') {
      const n = Number(v)
      return v.trim() !== '' && !Number.isNaN(n) ? n : null
    }
  }
  return null
}

function ticksOf(v: KqlValue): bigint | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return v
  if (typeof v === 'number') return Number.isFinite(v) ? BigInt(Math.trunc(v)) : null
  return null
}

/** Kusto's modulo keeps the sign of a positive divisor's range: -14 % 12 == 10 (and % -12 too). */
function modulo(a: number, b: number): number {
  const m = Math.abs(b)
  const r = a % m
  return r < 0 ? r + m : r === 0 ? 0 : r
}

function moduloBig(a: bigint, b: bigint): bigint {
  const m = b < 0n ? -b : b
  const r = a % m
  return r < 0n ? r + m : r
}

function compileArithmetic(op: P.ArithmeticOp, lt: KqlType, rtype: KqlType, type: KqlType, L: CompiledExpr, R: CompiledExpr): CompiledExpr {
  // dynamic ⊕ dynamic: numbers when both hold numbers, else null
  if (type === 'dynamic') {
    const f = numericOp(op, false)
    return (row, i, rows) => {
      const a = numberOf('dynamic', L(row, i, rows))
      const b = numberOf('dynamic', R(row, i, rows))
      if (a === null || b === null) return null
      const integral = Number.isInteger(a) && Number.isInteger(b)
      return integral ? numericOp(op, true)(a, b) : f(a, b)
    }
  }
  if (type === 'long') {
    const f = longOp(op)
    return (row, i, rows) => {
      const a = longOperand(lt, L(row, i, rows))
      if (a === null) return null
      const b = longOperand(rtype, R(row, i, rows))
      if (b === null) return null
      return f(a, b)
    }
  }
  if (isNum(type)) {
    const integral = type === 'int'
    const f = numericOp(op, integral)
    const wrap = type === 'int'
    return (row, i, rows) => {
      const a = numberOf(lt, L(row, i, rows))
      if (a === null) return null
      const b = numberOf(rtype, R(row, i, rows))
      if (b === null) return null
      const r = f(a, b)
      return wrap && r !== null ? r | 0 : r
    }
  }
  if (type === 'real' || (type === 'timespan' && op === '/' && lt === 'timespan' && rtype === 'timespan')) {
    return realOfTicks(op, L, R)
  }
  if (isTicks(type)) {
    // datetime/timespan results
    if (isTicks(lt) && isTicks(rtype)) {
      const dtMod = op === '%' && lt === 'datetime'
      return (row, i, rows) => {
        const a = ticksOf(L(row, i, rows))
        const b = ticksOf(R(row, i, rows))
        if (a === null || b === null) return null
        switch (op) {
          case '+':
            return a + b
          case '-':
            return a - b
          case '*':
            return a * b
          case '/':
            return b === 0n ? null : a / b
          case '%':
            return b === 0n ? null : dtMod ? moduloBig(a + TICKS_0001, b) : moduloBig(a, b)
        }
      }
    }
    // timespan ⊕ number, number * timespan, datetime / number (rare)
    const ticksLeft = isTicks(lt)
    return (row, i, rows) => {
      const lv = L(row, i, rows)
      const rv = R(row, i, rows)
      const t = ticksOf(ticksLeft ? lv : rv)
      const n = numberOf(ticksLeft ? rtype : lt, ticksLeft ? rv : lv)
      if (t === null || n === null) return null
      switch (op) {
        case '*':
          return scaleTicks(t, n)
        case '/':
          return n === 0 ? null : ticksLeft ? scaleTicks(t, 1 / n) : null
        case '%':
          return n === 0 ? null : moduloBig(t, BigInt(Math.trunc(n)))
        case '+':
          return t + BigInt(Math.trunc(n))
        case '-':
          return ticksLeft ? t - BigInt(Math.trunc(n)) : BigInt(Math.trunc(n)) - t
      }
    }
  }
  throw new KqlError('semantic', `the operator '${op}' cannot be applied to ${lt} and ${rtype}`)
}

/** An operand of long arithmetic (int, long, bool, or a number-holding dynamic/string) as a long. */
function longOperand(t: KqlType, v: KqlValue): Long | null {
  if (typeof v === 'number') return Number.isInteger(v) ? v : longFromDouble(v)
  if (typeof v === 'bigint') return t === 'int' || t === 'long' ? v : canonLong(v)
  const n = numberOf(t, v)
  return n === null ? null : longFromDouble(n)
}

function longOp(op: P.ArithmeticOp): (a: Long, b: Long) => Long | null {
  switch (op) {
    case '+':
      return longAdd
    case '-':
      return longSub
    case '*':
      return longMul
    case '/':
      return longDiv
    case '%':
      return longMod
  }
}

function scaleTicks(t: bigint, n: number): bigint | null {
  if (!Number.isFinite(n)) return null
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 53) return t * BigInt(n)
  return BigInt(Math.round(Number(t) * n))
}

function realOfTicks(op: P.ArithmeticOp, L: CompiledExpr, R: CompiledExpr): CompiledExpr {
  return (row, i, rows) => {
    const a = numberOf('real', L(row, i, rows))
    const b = numberOf('real', R(row, i, rows))
    if (a === null || b === null) return null
    return numericOp(op, false)(a, b)
  }
}

function numericOp(op: P.ArithmeticOp, integral: boolean): (a: number, b: number) => number | null {
  switch (op) {
    case '+':
      return (a, b) => a + b
    case '-':
      return (a, b) => a - b
    case '*':
      return (a, b) => a * b
    case '/':
      return integral ? (a, b) => (b === 0 ? null : Math.trunc(a / b)) : (a, b) => a / b
    case '%':
      return integral ? (a, b) => (b === 0 ? null : modulo(a, b)) : (a, b) => (b === 0 ? NaN : modulo(a, b))
  }
}

type Cmp = (a: KqlValue, b: KqlValue) => number | null

/** Three-way comparison for two operand types; null when incomparable (either side null). */
function comparerFor(lt: KqlType, rtype: KqlType): Cmp {
  if (lt === 'dynamic' && rtype === 'dynamic') {
    return (a, b) => {
      // numbers, exact longs (bigints) among them, compare by value
      if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint'))
        return a < b ? -1 : a > b ? 1 : 0
      if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
      return dynamicEquals(a as DynamicValue, b as DynamicValue) ? 0 : null
    }
  }
  if (lt === 'dynamic' || rtype === 'dynamic') {
    const other = lt === 'dynamic' ? rtype : lt
    const inner = comparerFor(other, other)
    const dynLeft = lt === 'dynamic'
    return (a, b) => {
      const da = dynLeft ? convertValue(other, 'dynamic', a) : a
      const db = dynLeft ? b : convertValue(other, 'dynamic', b)
      if (other === 'string' && dynLeft && a === null) return null
      if (other === 'string' && !dynLeft && b === null) return null
      return inner(da, db)
    }
  }
  if (isNum(lt) && isNum(rtype)) {
    if (lt === 'real' || lt === 'decimal' || rtype === 'real' || rtype === 'decimal') {
      // Kusto compares a long with a real as reals
      return (a, b) => {
        if (typeof a !== 'number' && typeof a !== 'bigint') return null
        if (typeof b !== 'number' && typeof b !== 'bigint') return null
        const x = Number(a)
        const y = Number(b)
        return x < y ? -1 : x > y ? 1 : x === y ? 0 : null
      }
    }
    // longs beyond 2^53 are bigints: JavaScript compares number and bigint exactly by value
    return (a, b) => {
      if (typeof a !== 'number' && typeof a !== 'bigint') return null
      if (typeof b !== 'number' && typeof b !== 'bigint') return null
      return a < b ? -1 : a > b ? 1 : Number.isNaN(a) || Number.isNaN(b) ? null : 0
    }
  }
  if (isTicks(lt) && isTicks(rtype)) {
    return (a, b) => {
      if (typeof a !== 'bigint' || typeof b !== 'bigint') return null
      return a < b ? -1 : a > b ? 1 : 0
    }
  }
  if (lt === 'bool' && rtype === 'bool') {
    return (a, b) => (typeof a !== 'boolean' || typeof b !== 'boolean' ? null : a === b ? 0 : a ? 1 : -1)
  }
  // strings, guids, and anything compared as text
  return (a, b) => {
    if (a === null || a === undefined || b === null || b === undefined) {
      if (lt === 'string' || rtype === 'string') {
        const x = a === null || a === undefined ? '' : String(a)
        const y = b === null || b === undefined ? '' : String(b)
        return x < y ? -1 : x > y ? 1 : 0
      }
      return null
    }
    const x = typeof a === 'string' ? a : String(a)
    const y = typeof b === 'string' ? b : String(b)
    return x < y ? -1 : x > y ? 1 : 0
  }
}

function isNullish(v: KqlValue): boolean {
  return v === null || v === undefined
}

function compileComparison(op: P.ComparisonOp, lt: KqlType, rtype: KqlType, L: CompiledExpr, R: CompiledExpr): CompiledExpr {
  if (op === '=~' || op === '!~') {
    const negate = op === '!~'
    const ls = textOf(lt)
    const rs = textOf(rtype)
    return (row, i, rows) => {
      const eq = equalsIgnoreCase(ls(L(row, i, rows)), rs(R(row, i, rows)))
      return negate ? !eq : eq
    }
  }
  // string == string is the hot path: ordinal, never null
  if ((lt === 'string' || lt === 'guid') && (rtype === 'string' || rtype === 'guid') && (op === '==' || op === '!=')) {
    const ci = lt === 'guid' || rtype === 'guid'
    if (op === '==') {
      return (row, i, rows) => {
        const a = L(row, i, rows)
        const b = R(row, i, rows)
        if (ci && (isNullish(a) || isNullish(b))) return isNullish(a) && isNullish(b) ? null : false
        const x = (a ?? '') as string
        const y = (b ?? '') as string
        return ci ? x.toLowerCase() === y.toLowerCase() : x === y
      }
    }
    return (row, i, rows) => {
      const a = L(row, i, rows)
      const b = R(row, i, rows)
      if (ci && (isNullish(a) || isNullish(b))) return isNullish(a) && isNullish(b) ? null : true
      const x = (a ?? '') as string
      const y = (b ?? '') as string
      return ci ? x.toLowerCase() !== y.toLowerCase() : x !== y
    }
  }
  const cmp = comparerFor(lt, rtype)
  const nullableLeft = lt !== 'string'
  const nullableRight = rtype !== 'string'
  switch (op) {
    case '==':
      return (row, i, rows) => {
        const a = L(row, i, rows)
        const b = R(row, i, rows)
        const an = nullableLeft && isNullish(a)
        const bn = nullableRight && isNullish(b)
        if (an || bn) return an && bn ? null : false
        const c = cmp(a, b)
        return c === null ? false : c === 0
      }
    case '!=':
      return (row, i, rows) => {
        const a = L(row, i, rows)
        const b = R(row, i, rows)
        const an = nullableLeft && isNullish(a)
        const bn = nullableRight && isNullish(b)
        if (an || bn) return an && bn ? null : true
        const c = cmp(a, b)
        return c === null ? true : c !== 0
      }
    default: {
      const test =
        op === '<' ? (c: number) => c < 0 : op === '<=' ? (c: number) => c <= 0 : op === '>' ? (c: number) => c > 0 : (c: number) => c >= 0
      return (row, i, rows) => {
        const a = L(row, i, rows)
        const b = R(row, i, rows)
        if ((nullableLeft && isNullish(a)) || (nullableRight && isNullish(b))) return null
        const c = cmp(a, b)
        return c === null ? null : test(c)
      }
    }
  }
}

/** Text of a value of a type, as string operators see it (tostring semantics). */
function textOf(t: KqlType): (v: KqlValue) => string {
  if (t === 'string') return (v) => (v ?? '') as string
  return (v) => valueToString(t, v ?? null)
}

function compileStringOp(op: P.BinaryOp, rightExpr: P.Expr, L: CompiledExpr, R: CompiledExpr): CompiledExpr {
  const lt = textOf('string')
  const negated = op.startsWith('!')
  const base = negated ? op.slice(1) : op
  if (rightExpr.kind === 'Literal') {
    // one matcher per constant: the same function the SQLite dialect registers (kql_match), so a
    // pushed-down filter answers exactly as this evaluator does
    const f = stringMatcher(base, (rightExpr.value ?? '') as string)
    return negated ? (row, i, rows) => !f(lt(L(row, i, rows))) : (row, i, rows) => f(lt(L(row, i, rows)))
  }
  let test: (text: string, needle: string) => boolean
  switch (base) {
    case 'contains':
      test = (t, n) => t.toLowerCase().includes(n.toLowerCase())
      break
    case 'contains_cs':
      test = (t, n) => t.includes(n)
      break
    case 'has':
      test = has
      break
    case 'has_cs':
      test = hasCs
      break
    case 'hasprefix':
      test = (t, n) => hasPrefix(t, n, false)
      break
    case 'hasprefix_cs':
      test = (t, n) => hasPrefix(t, n, true)
      break
    case 'hassuffix':
      test = (t, n) => hasSuffix(t, n, false)
      break
    case 'hassuffix_cs':
      test = (t, n) => hasSuffix(t, n, true)
      break
    case 'startswith':
      test = (t, n) => t.toLowerCase().startsWith(n.toLowerCase())
      break
    case 'startswith_cs':
      test = (t, n) => t.startsWith(n)
      break
    case 'endswith':
      test = (t, n) => t.toLowerCase().endsWith(n.toLowerCase())
      break
    case 'endswith_cs':
      test = (t, n) => t.endsWith(n)
      break
    case 'like':
    case 'like_cs': {
      const cs = base === 'like_cs'
      test = (t, n) => likePattern(n, cs).test(t)
      break
    }
    case 'matches regex':
      test = (t, n) => compileRegex(n, '', 'matches regex').test(t)
      break
    default:
      throw new KqlError('semantic', `unknown operator '${op}'`)
  }
  const fixed = test
  return (row, i, rows) => {
    const r = fixed(lt(L(row, i, rows)), lt(R(row, i, rows)))
    return negated ? !r : r
  }
}

/**
 * The test of a string operator (without its `!`) against a constant right-hand side. Shared by
 * this evaluator and the SQLite functions of pushed-down filters, so both answer the same.
 */
export function stringMatcher(base: string, needle: string): (text: string) => boolean {
  switch (base) {
    case 'contains': {
      const lower = needle.toLowerCase()
      return (t) => t.toLowerCase().includes(lower)
    }
    case 'contains_cs':
      return (t) => t.includes(needle)
    case 'has':
    case 'has_cs': {
      const cs = base === 'has_cs'
      const re = hasTermRegex(needle, cs)
      if (re) return (t) => re.test(t)
      return cs ? (t) => hasCs(t, needle) : (t) => has(t, needle)
    }
    case 'hasprefix':
      return (t) => hasPrefix(t, needle, false)
    case 'hasprefix_cs':
      return (t) => hasPrefix(t, needle, true)
    case 'hassuffix':
      return (t) => hasSuffix(t, needle, false)
    case 'hassuffix_cs':
      return (t) => hasSuffix(t, needle, true)
    case 'startswith': {
      const lower = needle.toLowerCase()
      return (t) => t.toLowerCase().startsWith(lower)
    }
    case 'startswith_cs':
      return (t) => t.startsWith(needle)
    case 'endswith': {
      const lower = needle.toLowerCase()
      return (t) => t.toLowerCase().endsWith(lower)
    }
    case 'endswith_cs':
      return (t) => t.endsWith(needle)
    case 'like':
    case 'like_cs': {
      const re = likePattern(needle, base === 'like_cs')
      return (t) => re.test(t)
    }
    case 'matches regex': {
      const re = compileRegex(needle, '', 'matches regex')
      return (t) => re.test(t)
    }
    case '=~':
      return (t) => equalsIgnoreCase(t, needle)
    default:
      throw new KqlError('semantic', `unknown operator '${base}'`)
  }
}

// ---------------------------------------------------------------------------------------------
// in / has_any / between / accessors / pack
// ---------------------------------------------------------------------------------------------

/** Items of an in-list as values of the operand's type (dynamic arrays contribute their elements). */
function expandItems(values: readonly KqlValue[], types: readonly KqlType[], operandType: KqlType): KqlValue[] {
  const out: KqlValue[] = []
  for (let k = 0; k < values.length; k++) {
    const v = values[k] ?? null
    const t = types[k]!
    if (t === 'dynamic' && operandType !== 'dynamic') {
      if (Array.isArray(v)) for (const el of v) out.push(convertValue(operandType, 'dynamic', el))
      else out.push(convertValue(operandType, 'dynamic', v))
    } else if (t !== operandType && !(isNum(t) && isNum(operandType))) {
      out.push(convertValue(operandType, t, v))
    } else {
      out.push(v)
    }
  }
  return out
}

function compileInList(e: P.InList, rt: ExprRuntime): CompiledExpr {
  const operandType = e.operand.type
  const X = compileExpr(e.operand, rt)
  const itemFns = e.items.map((it) => compileExpr(it, rt))
  const itemTypes = e.items.map((it) => it.type)
  const allConstant = e.items.every((it) => it.kind === 'Literal')
  const evalItems = (row: Row, i: number, rows: readonly Row[]): KqlValue[] =>
    expandItems(
      itemFns.map((f) => f(row, i, rows)),
      itemTypes,
      e.op === 'has_any' || e.op === 'has_all' ? 'string' : operandType,
    )

  if (e.op === 'has_any' || e.op === 'has_all') {
    const text = textOf(operandType)
    const all = e.op === 'has_all'
    const check = (t: string, terms: readonly KqlValue[]): boolean => {
      if (terms.length === 0) return all
      for (const term of terms) {
        const ok = has(t, (term ?? '') as string)
        if (all && !ok) return false
        if (!all && ok) return true
      }
      return all
    }
    if (allConstant) {
      const terms = evalItems([], 0, [])
      return (row, i, rows) => check(text(X(row, i, rows)), terms)
    }
    return (row, i, rows) => check(text(X(row, i, rows)), evalItems(row, i, rows))
  }

  const insensitive = e.op === 'in~' || e.op === '!in~'
  const negated = e.op === '!in' || e.op === '!in~'
  // longs among reals compare as doubles, as == does (.NET converts the long): an exact long
  // (a bigint past 2^53) is keyed by its double there
  const isRealType = (t: KqlType): boolean => t === 'real' || t === 'decimal'
  const doubles = isNum(operandType) && (isRealType(operandType) || itemTypes.some(isRealType))
  const norm = insensitive
    ? (v: KqlValue): unknown => (typeof v === 'string' ? v.toLowerCase() : keyOf(v))
    : doubles
      ? (v: KqlValue): unknown => (typeof v === 'bigint' ? Number(v) : keyOf(v))
      : (v: KqlValue): unknown => keyOf(v)
  const operandNorm = operandType === 'string' ? (v: KqlValue) => norm(v ?? '') : norm
  if (allConstant) {
    const set = new Set(evalItems([], 0, []).map((v) => (operandType === 'string' ? norm(v ?? '') : norm(v))))
    return (row, i, rows) => {
      const v = X(row, i, rows)
      if (operandType !== 'string' && isNullish(v)) return negated
      const found = set.has(operandNorm(v))
      return negated ? !found : found
    }
  }
  return (row, i, rows) => {
    const v = X(row, i, rows)
    if (operandType !== 'string' && isNullish(v)) return negated
    const key = operandNorm(v)
    let found = false
    for (const item of evalItems(row, i, rows)) {
      if ((operandType === 'string' ? norm(item ?? '') : norm(item)) === key) {
        found = true
        break
      }
    }
    return negated ? !found : found
  }
}

function compileBetween(e: P.Between, rt: ExprRuntime): CompiledExpr {
  const X = compileExpr(e.operand, rt)
  const lo = compileExpr(e.low, rt)
  const hi = compileExpr(e.high, rt)
  const cmpLo = comparerFor(e.operand.type, e.low.type)
  const cmpHi = comparerFor(e.operand.type, e.high.type)
  const negated = e.negated
  return (row, i, rows) => {
    const v = X(row, i, rows)
    if (isNullish(v)) return null
    const a = cmpLo(v, lo(row, i, rows))
    const b = cmpHi(v, hi(row, i, rows))
    if (a === null || b === null) return null
    const inside = a >= 0 && b <= 0
    return negated ? !inside : inside
  }
}

/** Reads a property or an element of a dynamic value (null when absent). */
export function accessDynamic(target: KqlValue, key: KqlValue): DynamicValue {
  if (target === null || target === undefined || typeof target !== 'object') return null
  if (typeof key === 'string') {
    if (Array.isArray(target)) return null
    const bag = target as Record<string, DynamicValue>
    return Object.hasOwn(bag, key) ? bag[key]! : null
  }
  if (typeof key === 'number' && Array.isArray(target)) {
    const idx = key < 0 ? target.length + key : key
    return idx >= 0 && idx < target.length ? (target[idx] as DynamicValue) : null
  }
  return null
}

function compileMember(e: P.Member, rt: ExprRuntime): CompiledExpr {
  const T = compileExpr(e.target, rt)
  if (e.key.kind === 'Literal') {
    const k = e.key.value
    return (row, i, rows) => accessDynamic(T(row, i, rows), k)
  }
  const K = compileExpr(e.key, rt)
  return (row, i, rows) => accessDynamic(T(row, i, rows), K(row, i, rows))
}

function compilePack(e: P.Pack, rt: ExprRuntime): CompiledExpr {
  const entries = e.entries.map((en) => ({ key: en.key, type: en.value.type, f: compileExpr(en.value, rt) }))
  const skip = e.skipNullAndEmpty
  return (row, i, rows) => {
    const bag: Record<string, DynamicValue> = {}
    for (const en of entries) {
      const v = en.f(row, i, rows)
      if (skip && (v === null || v === undefined || v === '')) continue
      bag[en.key] = toDynamic(en.type, v ?? (en.type === 'string' ? '' : null))
    }
    return bag
  }
}

// ---------------------------------------------------------------------------------------------
// Window functions (state lives in the closure: one compile per node run)
// ---------------------------------------------------------------------------------------------

function literalNumber(e: P.Expr | undefined, fallback: number): number {
  if (!e) return fallback
  if (e.kind === 'Literal' && typeof e.value === 'number') return e.value
  return fallback
}

function compileWindow(e: P.Window, rt: ExprRuntime): CompiledExpr {
  const args = e.args.map((a) => compileExpr(a, rt))
  switch (e.fn) {
    case 'prev':
    case 'next': {
      const f = args[0]!
      const offset = literalNumber(e.args[1], 1)
      const dflt = args[2]
      const sign = e.fn === 'prev' ? -1 : 1
      return (row, i, rows) => {
        const j = i + sign * offset
        if (j >= 0 && j < rows.length) return f(rows[j]!, j, rows)
        return dflt ? dflt(row, i, rows) : e.type === 'string' ? '' : null
      }
    }
    case 'row_number': {
      const start = args[0]
      const restart = args[1]
      let n = 0
      let first = true
      return (row, i, rows) => {
        const s = start ? Number(start(row, i, rows) ?? 1) : 1
        if (first || (restart && restart(row, i, rows) === true)) {
          n = s
          first = false
        } else {
          n++
        }
        return n
      }
    }
    case 'row_cumsum': {
      const f = args[0]!
      const restart = args[1]
      const ticks = e.type === 'timespan'
      let sum: number | bigint = ticks ? 0n : 0
      let first = true
      return (row, i, rows) => {
        if (first || (restart && restart(row, i, rows) === true)) {
          sum = ticks ? 0n : 0
          first = false
        }
        const v = f(row, i, rows)
        if (v !== null && v !== undefined) {
          if (ticks) sum = (sum as bigint) + (v as bigint)
          else if (e.type === 'long' && isLongValue(v)) sum = longAdd(sum as Long, v)
          else sum = (sum as number) + Number(v)
        }
        return e.type === 'int' ? (sum as number) | 0 : sum
      }
    }
    case 'row_rank_min':
    case 'row_rank_dense': {
      const f = args[0]!
      const restart = args[1]
      const dense = e.fn === 'row_rank_dense'
      let position = 0
      let rank = 0
      let prev: unknown
      let first = true
      return (row, i, rows) => {
        const v = keyOf(f(row, i, rows))
        if (first || (restart && restart(row, i, rows) === true)) {
          first = false
          position = 1
          rank = 1
          prev = v
          return rank
        }
        position++
        if (v !== prev) {
          rank = dense ? rank + 1 : position
          prev = v
        }
        return rank
      }
    }
    case 'row_window_session': {
      const f = args[0]!
      const maxFromFirst = args[1]!
      const maxGap = args[2]!
      const restart = args[3]
      let sessionStart: bigint | null = null
      let last: bigint | null = null
      let first = true
      return (row, i, rows) => {
        const v = f(row, i, rows) as bigint | null
        const d1 = maxFromFirst(row, i, rows) as bigint | null
        const d2 = maxGap(row, i, rows) as bigint | null
        const restartNow = restart ? restart(row, i, rows) === true : false
        if (v === null || v === undefined) return sessionStart
        if (
          first ||
          restartNow ||
          sessionStart === null ||
          last === null ||
          (d1 !== null && v - sessionStart > d1) ||
          (d2 !== null && v - last > d2)
        ) {
          sessionStart = v
          first = false
        }
        last = v
        return sessionStart
      }
    }
  }
}

/** Builds the key of several values (used by operators; re-exported for them). */
export { compositeKey }
