/**
 * @module
 * Small helpers shared by the function families: arity checks, errors that name the function,
 * and the conversions every family needs (a value of any type to text or to dynamic).
 */
import { KqlError } from '../kql-error.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { formatDateTime, formatTimespan } from '../values.js'
import type { ArgInfo } from './function-types.js'

/** A semantic error that names the function, e.g. "strlen(): expects 1 argument, got 2". */
export function functionError(name: string, detail: string): KqlError {
  return new KqlError('semantic', `${name}(): ${detail}`)
}

/** Throws unless `min <= args.length <= max`. */
export function checkArity(name: string, args: readonly ArgInfo[], min: number, max: number = min): void {
  if (args.length >= min && args.length <= max) return
  const expected = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`
  throw functionError(name, `expects ${expected} argument${expected === '1' ? '' : 's'}, got ${args.length}`)
}

/** Throws unless the argument's type is one of `allowed`. */
export function checkType(name: string, args: readonly ArgInfo[], index: number, allowed: readonly KqlType[]): void {
  const arg = args[index]
  if (arg && !allowed.includes(arg.type)) {
    throw functionError(name, `argument #${index + 1} (${arg.text}) must be ${allowed.join(' or ')}, got ${arg.type}`)
  }
}

export function isNull(value: KqlValue): boolean {
  return value === null || value === undefined
}

/**
 * .NET-style shortest round-trip text of a real, as Kusto prints reals: exponent form when the
 * decimal exponent is >= 15 or < -5 (`1E+15`, `1E-05`), `NaN`, `Infinity`, `-Infinity`.
 */
export function formatReal(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity'
  if (n === 0) return '0'
  const [mantissa, exponentText] = n.toExponential().split('e') as [string, string]
  const exponent = Number(exponentText)
  if (exponent >= 15 || exponent < -5) {
    const sign = exponent < 0 ? '-' : '+'
    return `${mantissa.replace('.', '.').toUpperCase()}E${sign}${String(Math.abs(exponent)).padStart(2, '0')}`
  }
  return String(n)
}

/** Kusto's tostring(): null → "", datetimes in ISO form, timespans as `[d.]hh:mm:ss`, dynamic as JSON. */
export function valueToString(type: KqlType, value: KqlValue): string {
  if (value === null || value === undefined) return ''
  switch (type) {
    case 'string':
    case 'guid':
      return String(value)
    case 'bool':
      return value ? 'true' : 'false'
    case 'datetime':
      return formatDateTime(value as bigint)
    case 'timespan':
      return formatTimespan(value as bigint)
    case 'real':
    case 'decimal':
      return formatReal(value as number)
    case 'int':
    case 'long':
      return String(value)
    case 'dynamic':
      return typeof value === 'string' ? value : dynamicToJson(value as DynamicValue)
  }
}

/** Compact JSON of a dynamic value (non-finite numbers as "NaN"/"Infinity" strings). */
export function dynamicToJson(value: DynamicValue): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? formatReal(v) : v))
}

/** A typed value as a dynamic value (datetimes and timespans become their text form). */
export function toDynamic(type: KqlType, value: KqlValue): DynamicValue {
  if (value === null || value === undefined) return null
  switch (type) {
    case 'datetime':
      return formatDateTime(value as bigint)
    case 'timespan':
      return formatTimespan(value as bigint)
    default:
      return typeof value === 'bigint' ? Number(value) : (value as DynamicValue)
  }
}
