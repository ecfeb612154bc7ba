/**
 * @module
 * The small SQL port the portable stores are written against. Both backends implement it
 * natively (better-sqlite3; pg pool). Statements use `?` placeholders; the PostgreSQL adapter
 * numbers them. Every value is a bound parameter: no store ever splices a value into SQL text.
 */
import type { SqlEngine } from './sql-engine.js'

export interface AllOptions {
  readonly exactIntegers?: boolean
  readonly arrays?: boolean
}

export interface SqlDb {
  /** What this engine does differently, as named capabilities: the stores ask it, never its name. */
  readonly engine: SqlEngine
  /**
   * All rows. PostgreSQL int8 values come back as numbers when exact, else as bigint. SQLite
   * integers are numbers unless `exactIntegers` is set, which returns every integer as bigint
   * (needed for datetime ticks). `arrays` returns each row as an array of its values in select-list
   * order (no per-row object: the columnar compactor reads millions of rows this way).
   */
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: AllOptions): Promise<T[]>
  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined>
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>
  /** Several statements without parameters (DDL). */
  exec(sql: string): Promise<void>
  /**
   * Runs `fn` in a transaction (SQLite: BEGIN IMMEDIATE, one writer; PostgreSQL: a dedicated pooled
   * client). Nested calls join the outer transaction. Rolls back when `fn` throws.
   */
  transaction<T>(fn: (tx: SqlDb) => Promise<T>): Promise<T>
  /** True for a handle bound to an open transaction. */
  readonly inTransaction: boolean
  close(): Promise<void>
}

/** Quotes an identifier for both dialects (double quotes, embedded quotes doubled). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** A number from a driver value that may be a string or bigint (PostgreSQL int8/numeric). */
export function toNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value)
}

export function toOptionalNumber(value: unknown): number | undefined {
  return value === null || value === undefined ? undefined : toNumber(value)
}
