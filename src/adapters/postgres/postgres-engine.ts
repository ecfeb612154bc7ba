/**
 * @module
 * PostgreSQL's capabilities for the portable SQL stores (sql/sql-db.ts).
 */
import type { KqlType } from '../../kql/index.js'
import { quoteIdent, type SqlEngine } from '../sql/sql-db.js'

/** The CSV field of one stored column. */
function csvField(column: { readonly name: string; readonly type: KqlType }): string {
  const c = quoteIdent(column.name)
  const quoted = `'"' || replace(${c}, '"', '""') || '"'`
  switch (column.type) {
    case 'string':
      return `COALESCE(${quoted}, '""')`
    case 'guid':
    case 'dynamic':
      return `COALESCE(${quoted}, '')`
    default:
      return `COALESCE(${c}::text, '')`
  }
}

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
  csvPage: {
    line: (columns) => ['_rowid::text', "COALESCE(_ingested_at::text, '')", ...columns.map(csvField)].join(` || ',' || `),
    aggregate: "string_agg(line, E'\\n')",
    // the shortest exact text of a double, whatever the server's setting
    setup: 'SET LOCAL extra_float_digits = 1',
  },
}
