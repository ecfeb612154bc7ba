/**
 * @module
 * The dialect registry: the dialect of each database the engine runs on (moved here from
 * sql/dialects.ts, issue 19 item 6, so everything that knows a dialect by name lives in dialect/).
 * Adding a database: a folder beside sqlite/, postgres/ and duckdb/ implementing
 * ../sql/sql-dialect.ts, its name in engine-types.ts `SqlDialectName`, its entry here.
 */
import type { SqlDialectName } from '../engine-types.js'
import type { SqlDialect } from '../sql/sql-dialect.js'
import { duckdbDialect } from './duckdb/duckdb-dialect.js'
import { postgresDialect } from './postgres/postgres-dialect.js'
import { sqliteDialect } from './sqlite/sqlite-dialect.js'

export const DIALECTS = { sqlite: sqliteDialect, postgres: postgresDialect, duckdb: duckdbDialect } as const satisfies Record<
  SqlDialectName,
  SqlDialect
>
