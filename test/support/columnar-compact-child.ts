/**
 * @module
 * A compactor process for the columnar crash test: `node --import tsx columnar-compact-child.ts
 * <sqlite file | postgres url> <segments dir> <table json> [merge]` compacts the table once, or
 * with `merge` merges its small segments once (with PROVENANT_FAILPOINT set, it is killed with
 * SIGKILL at that point).
 */
import { DuckDBInstance } from '@duckdb/node-api'
import { createColumnarStore } from '../../src/adapters/columnar/columnar-store.js'
import { createPgPool, createPostgresDb } from '../../src/adapters/postgres/postgres-db.js'
import { createSqliteDb, openSqliteDatabase } from '../../src/adapters/sqlite/sqlite-db.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'

const [target, dir, tableJson, mode] = process.argv.slice(2) as [string, string, string, string | undefined]
const onPostgres = target.startsWith('postgres')
const db = onPostgres ? createPostgresDb(createPgPool(target)) : createSqliteDb(openSqliteDatabase(target))
const duck = await DuckDBInstance.create(':memory:', { threads: '1' })
// rows are read and segments written by the compactor's worker thread, as in the server
const store = createColumnarStore(db, duck, {
  dir,
  segmentRows: 200,
  retireDelayMs: 0,
  ...(onPostgres ? { postgresUrl: target } : { sqliteFile: target }),
})
const table = JSON.parse(tableJson) as ConnectionTable
const result = mode === 'merge' ? await store.merge(table) : await store.compact(table)
process.stdout.write(JSON.stringify({ rows: result?.segment.rowCount ?? 0 }))
await store.close()
duck.closeSync()
await db.close()
