/**
 * @module
 * SQLite's capabilities for the portable SQL stores (sql/sql-db.ts).
 */
import type { SqlEngine } from '../sql/sql-db.js'

export const sqliteEngine: SqlEngine = {
  name: 'sqlite',
  columnTypes: {
    bool: 'INTEGER',
    int: 'INTEGER',
    long: 'INTEGER',
    real: 'REAL',
    decimal: 'REAL',
    string: "TEXT NOT NULL DEFAULT ''",
    datetime: 'INTEGER',
    timespan: 'INTEGER',
    guid: 'TEXT',
    dynamic: 'TEXT',
  },
  // `INTEGER PRIMARY KEY` is the rowid alias: the row id costs no second index
  int64Type: 'INTEGER',
  bindsBooleans: false,
  bindsBigints: true,
  infinityAsText: false,
  rowLocks: false,
  writableCtes: false,
  // Nothing to take: the migration's transaction is BEGIN IMMEDIATE, already the only writer.
  lockMigrations: async () => {},
  migrationSql: (migration) => migration.sqlite,
}
