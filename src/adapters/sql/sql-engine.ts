/**
 * @module
 * What differs between the SQL engines the portable stores run on, as named capabilities (kysely's
 * dialect adapters, style notes §1). Each engine adapter implements this once
 * (`sqlite/sqlite-engine.ts`, `postgres/postgres-engine.ts`) and hands it over as `SqlDb.engine`;
 * the stores in this folder ask it and never test the engine's name, so adding an engine means
 * writing one adapter folder (and each migration's text for it).
 */
import type { KqlType } from '../../kql/index.js'
import type { Migration } from './migrations/migration.js'
import type { SqlDb } from './sql-db.js'

export type Dialect = 'sqlite' | 'postgres'

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
}
