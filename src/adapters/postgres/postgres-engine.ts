/**
 * @module
 * PostgreSQL's capabilities for the portable SQL stores (sql/sql-db.ts).
 */
import type { SqlEngine } from '../sql/sql-db.js'

export const postgresEngine: SqlEngine = {
  name: 'postgres',
  columnTypes: {
    bool: 'BOOLEAN',
    int: 'INTEGER',
    long: 'BIGINT',
    real: 'DOUBLE PRECISION',
    decimal: 'DOUBLE PRECISION',
    string: "TEXT NOT NULL DEFAULT ''",
    datetime: 'BIGINT',
    timespan: 'BIGINT',
    guid: 'TEXT',
    dynamic: 'TEXT',
  },
  int64Type: 'BIGINT',
  bindsBooleans: true,
  bindsBigints: false,
  infinityAsText: true,
  rowLocks: true,
  writableCtes: true,
  // a transaction-level advisory lock: released at commit or rollback, and works behind PgBouncer's transaction pooling
  lockMigrations: async (tx, key) => {
    await tx.get('SELECT pg_advisory_xact_lock(?)', [key])
  },
  migrationSql: (migration) => migration.postgres,
}
