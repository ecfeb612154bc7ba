/**
 * @module
 * Compiles plan expressions into closures over positional rows. Type dispatch happens once at
 * compile time, so the per-row work is the operation itself (design §12: execution speed).
 */

import { convertValue, toDynamic } from '../functions/value-conversions.js'
import { KqlError } from '../kql-error.js'
import { isLongValue, type Long, longAdd, longNeg } from '../long.js'
import type * as P from '../plan/plan.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { comparerFor, compileArithmetic, compileComparison, isNullish, isNum } from './compile-arithmetic.js'
import { compileStringOp, textOf } from './compile-string-ops.js'
import type { CompiledExpr, ExprRuntime, Row } from './rows.js'
import { compositeKey, has, keyOf } from './value-ops.js'

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
