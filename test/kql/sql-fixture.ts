/**
 * @module
 * Real databases for the engine's SQL tests: a temporary SQLite file and (when reachable) a fresh
 * PostgreSQL database, holding tables in the production layout (the engines' `columnTypes`, column-codec.ts)
 * and read through the production SqlSource code (src/adapters/query-workers/query-source.ts) on read-only
 * connections with the engine's SQL functions registered.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import Database from 'better-sqlite3'
import pg from 'pg'
import { createDuckdbQuerySource } from '../../src/adapters/columnar/duckdb-query-source.js'
import { appendRows, duckdbColumnDefs } from '../../src/adapters/columnar/duckdb-values.js'
import { pgTypes } from '../../src/adapters/postgres/postgres-db.js'
import { postgresEngine } from '../../src/adapters/postgres/postgres-engine.js'
import { createPostgresQuerySource, createSqliteQuerySource, registerKqlFunctions } from '../../src/adapters/query-workers/query-source.js'
import { encodeValue } from '../../src/adapters/sql/column-codec.js'
import type { SqlEngine } from '../../src/adapters/sql/sql-db.js'
import { sqliteEngine } from '../../src/adapters/sqlite/sqlite-engine.js'
import type { KqlColumn, KqlValue, SqlDialectName, SqlSource } from '../../src/kql/index.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/backends.js'

export interface FixtureTable {
  readonly sqlName: string
  readonly columns: readonly KqlColumn[]
  readonly rows: readonly (readonly KqlValue[])[]
}

export interface SqlFixture {
  /** The SQL engines holding the tables (every dialect the engine pushes work into). */
  readonly backends: readonly SqlDialectName[]
  readonly sources: Readonly<Partial<Record<SqlDialectName, SqlSource>>>
  /** Creates (or replaces) tables on every backend, with `_rowid` as the first, hidden column. */
  load(tables: readonly FixtureTable[]): Promise<void>
  close(): Promise<void>
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`

export async function openSqlFixture(): Promise<SqlFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-kql-sql-'))
  const file = join(dir, 'data.db')
  const writer = new Database(file)
  writer.pragma('journal_mode = WAL')
  writer.pragma('synchronous = OFF')
  const reader = new Database(file, { readonly: true, fileMustExist: true })
  reader.pragma('query_only = ON')
  registerKqlFunctions(reader)
  const sources: Partial<Record<SqlDialectName, SqlSource>> = { sqlite: createSqliteQuerySource(reader) }
  let database: TestDatabase | undefined
  let admin: pg.Client | undefined
  let pgSource: (SqlSource & { close(): Promise<void> }) | undefined
  if (BACKENDS.includes('postgres')) {
    database = await createTestDatabase()
    admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    // throwaway test data: commits need not wait for the disk
    await admin.query('SET synchronous_commit = off')
    const client = new pg.Client({ connectionString: database.url, types: pgTypes as unknown as pg.CustomTypesConfig })
    await client.connect()
    pgSource = createPostgresQuerySource(client, { timeoutMs: () => 30_000 })
    sources.postgres = pgSource
  }
  const duck = await DuckDBInstance.create(':memory:', { threads: '1' })
  const duckConnection = await duck.connect()
  sources.duckdb = createDuckdbQuerySource(duckConnection)
  return {
    backends: Object.keys(sources) as SqlDialectName[],
    sources,
    async load(tables) {
      for (const t of tables) {
        const defs = (engine: SqlEngine): string =>
          [`_rowid ${engine.int64Type} PRIMARY KEY`, ...t.columns.map((c) => `${quote(c.name)} ${engine.columnTypes[c.type]}`)].join(', ')
        const names = ['_rowid', ...t.columns.map((c) => quote(c.name))].join(', ')
        writer.exec(`DROP TABLE IF EXISTS ${quote(t.sqlName)}; CREATE TABLE ${quote(t.sqlName)} (${defs(sqliteEngine)})`)
        const insert = writer.prepare(
          `INSERT INTO ${quote(t.sqlName)} (${names}) VALUES (${['?', ...t.columns.map(() => '?')].join(', ')})`,
        )
        writer.transaction(() => {
          t.rows.forEach((row, i) => {
            insert.run(i + 1, ...t.columns.map((c, k) => encodeValue(sqliteEngine, c.type, row[k] ?? null) as never))
          })
        })()
        if (admin) {
          await admin.query(`DROP TABLE IF EXISTS ${quote(t.sqlName)}; CREATE TABLE ${quote(t.sqlName)} (${defs(postgresEngine)})`)
          if (t.rows.length > 0) {
            const width = t.columns.length + 1
            const values = t.rows
              .map((_, r) => `(${Array.from({ length: width }, (_, k) => `$${r * width + k + 1}`).join(', ')})`)
              .join(', ')
            const params = t.rows.flatMap((row, i) => [
              i + 1,
              ...t.columns.map((c, k) => encodeValue(postgresEngine, c.type, row[k] ?? null)),
            ])
            await admin.query(`INSERT INTO ${quote(t.sqlName)} (${names}) VALUES ${values}`, params)
          }
        }
        // DuckDB: a Parquet file sorted as segments are, behind a view of the table's name
        const staging = quote(`${t.sqlName}_staging`)
        const parquet = join(dir, `${t.sqlName}.parquet`).replace(/'/g, "''")
        await duckConnection.run(`CREATE OR REPLACE TABLE ${staging} (${duckdbColumnDefs(t.columns)})`)
        await appendRows(
          duckConnection,
          `${t.sqlName}_staging`,
          t.columns,
          t.rows.map((values, i) => ({ rowId: i + 1, ingestedAt: null, values })),
        )
        await duckConnection.run(`COPY (SELECT * FROM ${staging} ORDER BY "_rowid") TO '${parquet}' (FORMAT parquet)`)
        await duckConnection.run(`DROP TABLE ${staging}`)
        await duckConnection.run(`CREATE OR REPLACE VIEW ${quote(t.sqlName)} AS SELECT * FROM read_parquet('${parquet}')`)
      }
    },
    async close() {
      duckConnection.closeSync()
      duck.closeSync()
      reader.close()
      writer.close()
      rmSync(dir, { recursive: true, force: true })
      await pgSource?.close()
      await admin?.end()
      await database?.drop()
    },
  }
}
