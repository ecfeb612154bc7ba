/**
 * @module
 * KQL scalar types and their JavaScript runtime representation (the engine's value model).
 *
 * Every expression has a static type resolved by the binder; values themselves carry no type tag,
 * so a bigint is a datetime or a timespan depending on the column or expression type.
 *
 * | KQL type  | runtime value                                   | null                      |
 * |-----------|-------------------------------------------------|---------------------------|
 * | bool      | boolean                                         | null                      |
 * | int       | number (integral, int32 range)                  | null                      |
 * | long      | number if a safe integer, else bigint (long.ts) | null                      |
 * | real      | number (NaN and ±Infinity allowed)              | null                      |
 * | decimal   | number (computed as real, reported as decimal)  | null                      |
 * | string    | string                                          | never: "" is the empty value |
 * | datetime  | bigint: 100 ns ticks since 1970-01-01T00:00:00Z | null                      |
 * | timespan  | bigint: 100 ns ticks                            | null                      |
 * | guid      | string, lower-case 8-4-4-4-12                   | null                      |
 * | dynamic   | DynamicValue (JSON-like; see below)             | null                      |
 *
 * Inside dynamic values datetimes and timespans are kept as their text form (ISO 8601 and
 * `[d.]hh:mm:ss[.fffffff]`), exactly as Kusto serialises them; NaN/±Infinity stay JS numbers.
 * An integer beyond ±(2^53 − 1) inside a dynamic value is a canonical long (a bigint, long.ts), so
 * longs keep every digit through parse_json, bags, arrays and storage (dynamic-json.ts).
 */

export const KQL_TYPES = ['bool', 'int', 'long', 'real', 'decimal', 'string', 'datetime', 'timespan', 'guid', 'dynamic'] as const
export type KqlType = (typeof KQL_TYPES)[number]

export type DynamicValue = null | boolean | number | bigint | string | DynamicValue[] | { [key: string]: DynamicValue }

/** A value of any KQL type (see the table above). */
export type KqlValue = null | boolean | number | string | bigint | DynamicValue

/** Type names Kusto accepts in schemas and `datatable(...)` declarations, mapped to the canonical name. */
export const TYPE_ALIASES: Readonly<Record<string, KqlType>> = {
  bool: 'bool',
  boolean: 'bool',
  int: 'int',
  int32: 'int',
  long: 'long',
  int64: 'long',
  real: 'real',
  double: 'real',
  float: 'real',
  decimal: 'decimal',
  string: 'string',
  datetime: 'datetime',
  date: 'datetime',
  timespan: 'timespan',
  time: 'timespan',
  guid: 'guid',
  uuid: 'guid',
  uniqueid: 'guid',
  dynamic: 'dynamic',
}

export function isKqlType(name: string): name is KqlType {
  return (KQL_TYPES as readonly string[]).includes(name)
}

/** Resolves a declared type name (case-insensitive, aliases allowed) or returns undefined. */
export function parseTypeName(name: string): KqlType | undefined {
  return TYPE_ALIASES[name.toLowerCase()]
}

export function isNumericType(t: KqlType): boolean {
  return t === 'int' || t === 'long' || t === 'real' || t === 'decimal'
}

/** Kusto's numeric promotion: int < long < decimal/real. Result type of arithmetic on two numerics. */
export function promoteNumeric(a: KqlType, b: KqlType): KqlType {
  if (a === 'real' || b === 'real') return 'real'
  if (a === 'decimal' || b === 'decimal') return 'decimal'
  if (a === 'long' || b === 'long') return 'long'
  return 'int'
}

/** The value Kusto treats as "null" for a type (strings have none: the empty string). */
export function nullOf(t: KqlType): KqlValue {
  return t === 'string' ? '' : null
}
