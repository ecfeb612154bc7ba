/**
 * @module
 * The benchmark queries both ways over one dataset's segment files (kql-scale and its CI smoke,
 * test/scale/kql-scale-smoke.test.ts): as KQL through the duckdb dialect on the view the columnar
 * tier queries (segments + the row-store tail), and hand-written in DuckDB SQL with read_parquet
 * over the files the manifest lists, in one DuckDB instance with the server's settings
 * (PROVENANT_COLUMNAR_THREADS / PROVENANT_COLUMNAR_MEMORY, or their defaults).
 */
import { dirname, join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { type ColumnarStore, createColumnarStore } from '../../src/adapters/columnar/columnar-store.js'
import type { SqlDb } from '../../src/adapters/sql/sql-db.js'
import { createSqliteDb, openSqliteDatabase } from '../../src/adapters/sqlite/sqlite-db.js'
import { type ColumnarConfig, columnarOf } from '../../src/config/config.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'
import { type CompiledPlanQuery, compileQuery, type QueryResult } from '../../src/kql/index.js'
import { schemaOf, T0 } from './kql-dataset.js'
import type { BenchQuery } from './kql-queries.js'

/** "now" for every query (ten days after the data ends). */
export const QUERY_NOW = T0 + 40n * 86_400n * 10_000_000n

export interface SegmentQuery {
  readonly compiled: CompiledPlanQuery
  kql(): Promise<QueryResult>
  hand(): Promise<unknown[][]>
}

export interface SegmentQueries {
  readonly settings: ColumnarConfig
  readonly store: ColumnarStore
  prepare(q: BenchQuery): Promise<SegmentQuery>
  close(): Promise<void>
}

/** Opens the segments of the SQLite dataset in `sqliteFile`'s data directory (`<data>/segments`, the server's default). */
export async function openSegmentQueries(sqliteFile: string, tables: readonly ConnectionTable[]): Promise<SegmentQueries> {
  const settings = columnarOf({ ...process.env, PROVENANT_COLUMNAR: 'on' }, dirname(sqliteFile))!
  return openSegmentQueriesOn(createSqliteDb(openSqliteDatabase(sqliteFile)), settings, tables, sqliteFile)
}

/**
 * The same over any row store holding the manifest (`db`, closed by close()) and the segments in
 * `settings.dir`: kql-shared-segments opens a PostgreSQL database's. `sqliteFile` when `db` is SQLite.
 */
export async function openSegmentQueriesOn(
  db: SqlDb,
  settings: ColumnarConfig,
  tables: readonly ConnectionTable[],
  sqliteFile?: string,
): Promise<SegmentQueries> {
  const { schema, sqlNames } = schemaOf(tables)
  const duck = await DuckDBInstance.create(':memory:', { threads: String(settings.threads), memory_limit: settings.memoryLimit })
  const store = createColumnarStore(db, duck, {
    dir: settings.dir,
    segmentRows: settings.segmentRows,
    ...(sqliteFile === undefined ? {} : { sqliteFile }),
  })
  const columnar = await store.openQuerySource(tables)
  const hand = await duck.connect()
  const files = async (kqlName: string): Promise<string> => {
    const sqlName = sqlNames[kqlName]!
    const list = await store.segments(sqlName)
    return `read_parquet([${list.map((s) => `'${join(settings.dir, sqlName, s.fileName)}'`).join(', ')}])`
  }
  const fromR = await files('Readings')
  const fromS = await files('Sites')
  return {
    settings,
    store,
    async prepare(q) {
      const prepared = await hand.prepare(q.sql.duckdb.replaceAll('{R}', fromR).replaceAll('{S}', fromS))
      const compiled = compileQuery(q.kql, schema, { dialect: 'duckdb' })
      return {
        compiled,
        kql: () => compiled.execute(columnar, { now: QUERY_NOW, rowCap: 10_000_000 }),
        async hand() {
          prepared.bind(q.params as never)
          return (await prepared.runAndReadAll()).getRows() as unknown[][]
        },
      }
    },
    async close() {
      hand.closeSync()
      columnar.close()
      await store.close()
      duck.closeSync()
      await db.close()
    },
  }
}
