/**
 * @module
 * The small SQL port the portable stores are written against. Both backends implement it
 * natively (better-sqlite3; pg pool). Statements use `?` placeholders; the PostgreSQL adapter
 * numbers them. Every value is a bound parameter: no store ever splices a value into SQL text.
 */
import type { KqlType } from '../../kql/index.js'
import type { Migration } from './migrations/migration.js'

/** An engine's name. */
export type Dialect = 'sqlite' | 'postgres'

/**
 * What differs between the SQL engines the portable stores run on, as named capabilities (kysely's
 * dialect adapters, style notes §1). Each engine adapter implements `SqlEngine` once
 * (`sqlite/sqlite-engine.ts`, `postgres/postgres-engine.ts`) and hands it over as `SqlDb.engine`;
 * the stores ask it and never test the engine's name, so adding an engine means writing one
 * adapter folder (and each migration's text for it).
 */
export interface SqlEngine {
  /** The engine's name: the KQL compiler's SQL dialect, `Stores.backend`, logs. Not for branching. */
  readonly name: Dialect
  /**
   * The column type that stores each KQL type in a connection table. Datetimes and timespans are
   * 64-bit integers of 100 ns ticks (exact to Kusto's precision); dynamic values are JSON text
   * (PostgreSQL jsonb would reorder keys); strings are never NULL (Kusto has no null string).
   */
  readonly columnTypes: Readonly<Record<KqlType, string>>
  /** The column type of a 64-bit integer (row ids, ingestion times). */
  readonly int64Type: string
  /** True when the driver binds a JS boolean; else a boolean is bound as 1 or 0. */
  readonly bindsBooleans: boolean
  /** True when the driver binds a JS bigint exactly; else a 64-bit integer is bound as its text. */
  readonly bindsBigints: boolean
  /** True when ±Infinity must be bound as the text `'Infinity'`/`'-Infinity'` (a double parameter is refused). */
  readonly infinityAsText: boolean
  /**
   * True when `SELECT … FOR UPDATE` locks the row to the transaction. False where the transaction
   * is already the only writer (SQLite's BEGIN IMMEDIATE), which also has no such clause.
   */
  readonly rowLocks: boolean
  /**
   * True when one statement can insert into several tables through data-modifying CTEs
   * (`WITH r AS (INSERT … RETURNING 1) …`), which saves round trips on a server engine.
   */
  readonly writableCtes: boolean
  /**
   * Takes, inside `tx`, the lock that lets one process at a time apply migrations, released when
   * `tx` ends. Every process sharing the database must contend on `key`.
   */
  lockMigrations(tx: SqlDb, key: number): Promise<void>
  /** The text of `migration` for this engine. */
  migrationSql(migration: Migration): string
  /** How this engine writes a page of a connection table's rows as CSV (the columnar tier's reader). */
  readonly csvPage: CsvPageFormat
}

/**
 * A page of a connection table's rows as CSV text the database writes itself, for DuckDB's
 * `read_csv` (adapters/columnar/row-export.ts): no JavaScript value per row or field. Integers
 * print as digits, doubles as their shortest exact text (NaN, ±Inf(inity) as words), strings
 * quoted with inner quotes doubled (a missing string is ""), NULL as an empty unquoted field.
 */
export interface CsvPageFormat {
  /** The expression of one line: `_rowid`, `_ingested_at`, then the columns. */
  line(columns: readonly { readonly name: string; readonly type: KqlType }[]): string
  /** The aggregate that joins a page's lines (the column `line`) into one value. */
  readonly aggregate: string
  /** A statement to run first in the page's transaction, if any. */
  readonly setup?: string
}

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
   * Appends many rows to `table` (names unquoted), in this handle's transaction or else in one of its
   * own, by the engine's cheapest path: SQLite runs one cached INSERT of a few dozen rows again and
   * again (a statement per batch size, or one row per call, cost more: docs/decisions.md);
   * PostgreSQL streams the rows to `COPY … FROM STDIN`. `values` holds the rows one after another,
   * `columns.length` values each, as this engine binds parameters (column-codec.ts): null, numbers,
   * bigints, booleans and strings.
   */
  insertMany(table: string, columns: readonly string[], values: readonly unknown[]): Promise<void>
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

export function toOptionalText(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value)
}
