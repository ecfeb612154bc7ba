/**
 * @module
 * Result types of KQL's operators (Kusto's operator signatures: numeric widening, datetime and
 * timespan arithmetic, dynamic operands). Undefined means "not applicable to these types".
 */
import type { ArithmeticOp } from '../plan/plan.js'
import { isNumericType, type KqlType } from '../types.js'

/** Widest numeric type (int < long < decimal < real). */
export function widest(a: KqlType, b: KqlType): KqlType {
  if (a === 'real' || b === 'real') return 'real'
  if (a === 'decimal' || b === 'decimal') return 'decimal'
  if (a === 'long' || b === 'long') return 'long'
  return 'int'
}

export function arithmeticType(op: ArithmeticOp, l: KqlType, r: KqlType): KqlType | undefined {
  const ln = isNumericType(l)
  const rn = isNumericType(r)
  if (ln && rn) return widest(l, r)
  if (l === 'dynamic' && r === 'dynamic') return 'dynamic'
  if (l === 'dynamic' || r === 'dynamic') {
    const other = l === 'dynamic' ? r : l
    if (other === 'int') return 'long'
    if (op === '+' || op === '-')
      return other === 'long' || other === 'real' || other === 'decimal' || other === 'timespan' || other === 'datetime' ? other : undefined
    return isNumericType(other) ? other : undefined
  }
  switch (op) {
    case '+':
      if (l === 'timespan' && r === 'timespan') return 'timespan'
      if ((l === 'datetime' && r === 'timespan') || (l === 'timespan' && r === 'datetime')) return 'datetime'
      return undefined
    case '-':
      if (l === 'timespan' && r === 'timespan') return 'timespan'
      if (l === 'datetime' && r === 'datetime') return 'timespan'
      if (l === 'datetime' && r === 'timespan') return 'datetime'
      return undefined
    case '*':
      if ((l === 'timespan' && rn) || (ln && r === 'timespan')) return 'timespan'
      if (l === 'timespan' && r === 'timespan') return 'timespan'
      return undefined
    case '/':
      if (l === 'timespan' && r === 'timespan') return 'real'
      if (l === 'timespan' && rn) return 'timespan'
      if (l === 'datetime' && (r === 'datetime' || r === 'timespan')) return 'real'
      return undefined
    case '%':
      if (l === 'timespan' && (r === 'timespan' || rn)) return 'timespan'
      if (l === 'datetime' && (r === 'datetime' || r === 'timespan')) return 'timespan'
      return undefined
  }
}

/** Whether two types may be compared with <, <=, >, >= (and between). */
export function orderable(l: KqlType, r: KqlType): boolean {
  if (isNumericType(l) && isNumericType(r)) return true
  if (l === r) return l !== 'dynamic' || true
  if (l === 'dynamic' || r === 'dynamic') return true
  return false
}

/** Whether two types may be compared with == and != (Kusto allows most scalar pairs). */
export function equatable(l: KqlType, r: KqlType): boolean {
  if (l === r) return true
  if (isNumericType(l) && isNumericType(r)) return true
  if (l === 'dynamic' || r === 'dynamic') return true
  if ((l === 'string' && r === 'guid') || (l === 'guid' && r === 'string')) return true
  return false
}
