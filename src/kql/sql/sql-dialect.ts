/**
 * @module
 * Everything that differs between the SQL databases the engine pushes work into (style notes
 * §6.3). The compiler (push-down.ts, sql-expressions.ts) is dialect-neutral: it asks these hooks
 * and capability flags, and never branches on the dialect's name. A hook that returns undefined
 * means "this dialect cannot express that exactly": the work then stays in the in-memory
 * evaluator, which is the reference.
 */
import type { SqlDialectName } from '../engine-types.js'
import type { KqlType, KqlValue } from '../types.js'

/** Case-insensitive and term string operators a dialect may translate (their negations are NOT of these). */
export type StringMatchOp =
  | '=~'
  | 'contains'
  | 'contains_cs'
  | 'startswith'
  | 'startswith_cs'
  | 'endswith'
  | 'endswith_cs'
  | 'has'
  | 'has_cs'
  | 'hasprefix'
  | 'hasprefix_cs'
  | 'hassuffix'
  | 'hassuffix_cs'

export interface SqlDialect {
  readonly name: SqlDialectName
  /** Quotes an identifier (double quotes, embedded quotes doubled in both dialects). */
  quoteIdentifier(name: string): string
  /**
   * Placeholder of the `n`th (1-based) distinct parameter. `numberedParameters`: the same
   * placeholder may be repeated (PostgreSQL `$1`); otherwise every occurrence is its own `?`.
   */
  placeholder(n: number): string
  readonly numberedParameters: boolean
  /** A bound parameter of a KQL type as SQL: PostgreSQL casts it so its type never depends on context. */
  param(placeholder: string, type: KqlType): string
  /** The driver value of a literal (SQLite: bigint for integers, 1/0 for bool; PostgreSQL: native). */
  encodeParam(type: KqlType, value: KqlValue): unknown
  /** A NULL of a type (PostgreSQL needs the cast inside CASE and unions). */
  nullOf(type: KqlType): string
  readonly trueSql: string
  readonly falseSql: string
  /** Real columns can hold NaN, which SQL orders above every number and calls equal to itself. */
  readonly hasNaN: boolean
  /** `x` is NaN (only called when hasNaN). */
  isNaN(x: string): string
  /** NaN as a SQL value (only called when hasNaN). */
  readonly nanSql: string
  /**
   * Wraps real arithmetic whose result may be NaN where the database cannot hold NaN (SQLite turns
   * it into NULL): the statement then fails with a data refusal and the plan runs in memory.
   * `operandsNotNull` is the SQL condition under which a NULL result can only mean NaN.
   */
  guardRealResult(expr: string, operandsNotNull: string | undefined): string
  /**
   * Wraps long `+ - *` whose result may leave int64, where the database would not wrap around as
   * Kusto does (SQLite makes it a REAL): the statement then fails with a data refusal.
   */
  guardLongResult(expr: string, operands?: { readonly a: string; readonly op: '+' | '-' | '*'; readonly b: string }): string
  /**
   * A stored column as SQL reads it. SQLite keeps a NaN real as the text 'NaN' (it has no NaN):
   * reading one refuses, so the plan runs in memory over plain reads, which decode it.
   */
  readColumn(sql: string, type: KqlType): string
  /** Integer division truncating toward zero, NULL for a zero divisor. */
  integerDivide(a: string, b: string): string
  /** Real division; may refuse (undefined) when a zero divisor would not give ±Infinity/NaN. */
  realDivide(a: string, b: string, divisorNotNull: boolean): string | undefined
  toReal(x: string): string
  /** Null-safe equality (nulls match nulls, as Kusto's join keys). */
  nullSafeEquals(a: string, b: string): string
  /**
   * A string operator with a constant right-hand side, exactly as the in-memory evaluator
   * computes it (`text` is never NULL); undefined when the dialect cannot match it exactly.
   */
  stringMatch(op: StringMatchOp, text: string, needle: string, bind: (value: string) => string): string | undefined
  /** `text in~ (needles)`: the in-memory evaluator compares JavaScript toLowerCase() forms. */
  inIgnoreCase(text: string, needles: readonly string[], bind: (value: string) => string): string | undefined
  /**
   * A sort key whose SQL order is the ordinal UTF-16 order of .NET and JavaScript strings (SQL
   * orders by code point, which differs for supplementary characters), or undefined.
   */
  stringSortKey(x: string): string | undefined
  /**
   * Average of a numeric value as the evaluator computes it (reals: the sum in doubles; integers:
   * the exact sum rounded to a double once; divided by their count; NaN for none). `nullIsNaN`
   * when the result's NULL stands for NaN.
   */
  average(x: string, integral: boolean): { readonly sql: string; readonly nullIsNaN: boolean }
  /** SUM as a value decodeValue() reads exactly; an integer sum that leaves int64 must fail (a data refusal). */
  sum(x: string, integral: boolean): string
}
