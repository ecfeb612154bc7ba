/**
 * @module
 * The dialect of each database the engine runs on.
 */
import { duckdbDialect } from '../dialect/duckdb/duckdb-dialect.js'
import { postgresDialect } from '../dialect/postgres/postgres-dialect.js'
import { sqliteDialect } from '../dialect/sqlite/sqlite-dialect.js'
import type { SqlDialectName } from '../engine-types.js'
import type { SqlDialect } from './sql-dialect.js'

export const DIALECTS = { sqlite: sqliteDialect, postgres: postgresDialect, duckdb: duckdbDialect } as const satisfies Record<
  SqlDialectName,
  SqlDialect
>
