/**
 * @module
 * Arithmetic and comparison operators compiled over already-compiled operands (split out of
 * compile-expr.ts, issue 19 item 6): Kusto's operator signatures (int/long/real widening, exact
 * wrapping longs, `/` truncating for integers, `%` never negative, datetime/timespan arithmetic)
 * and the evaluator's null/NaN rules for comparisons.
 */

import { convertValue } from '../functions/value-conversions.js'
import { KqlError } from '../kql-error.js'
import { canonLong, type Long, longAdd, longDiv, longFromDouble, longMod, longMul, longSub } from '../long.js'
import type * as P from '../plan/plan.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { textOf } from './compile-string-ops.js'
import type { CompiledExpr } from './rows.js'
import { dynamicEquals, equalsIgnoreCase } from './value-ops.js'

/** .NET ticks between 0001-01-01 and the Unix epoch (datetime % timespan is computed on .NET ticks). */
const TICKS_0001 = 621355968000000000n

export const isNum = (t: KqlType): boolean => t === 'int' || t === 'long' || t === 'real' || t === 'decimal'
const isTicks = (t: KqlType): boolean => t === 'datetime' || t === 'timespan'
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

export function compileArithmetic(
  op: P.ArithmeticOp,
  lt: KqlType,
  rtype: KqlType,
  type: KqlType,
  L: CompiledExpr,
  R: CompiledExpr,
): CompiledExpr {
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
        case '*': {
          // an exact long past 2^53 multiplies the ticks exactly (a double would drop its last digits)
          const raw = ticksLeft ? rv : lv
          return typeof raw === 'bigint' && !isTicks(ticksLeft ? rtype : lt) ? t * raw : scaleTicks(t, n)
        }
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
export function comparerFor(lt: KqlType, rtype: KqlType): Cmp {
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

export function isNullish(v: KqlValue): boolean {
  return v === null || v === undefined
}

export function compileComparison(op: P.ComparisonOp, lt: KqlType, rtype: KqlType, L: CompiledExpr, R: CompiledExpr): CompiledExpr {
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
