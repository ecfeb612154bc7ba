/**
 * @module
 * The only place that picks a backend: SQLite in the data directory (embedded default) or
 * PostgreSQL when a database URL is given. Runs migrations before returning.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { migrate } from './migrate.js'
import { MIGRATIONS } from './migrations/index.js'
import { createPgPool, createPostgresDb } from './postgres/postgres-db.js'
import { createSqlStores, type SqlStores, type SqlStoresOptions } from './sql/sql-stores.js'
import { createSqliteDb, ensurePrivateDatabaseFile, openSqliteDatabase } from './sqlite/sqlite-db.js'

export interface StorageConfig {
  readonly dataDir: string
  readonly databaseUrl: string | undefined
}

export function sqliteFileOf(dataDir: string): string {
  return join(dataDir, 'provenant.db')
}

export async function openStores(config: StorageConfig, options: SqlStoresOptions = {}): Promise<SqlStores> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  if (!config.databaseUrl) ensurePrivateDatabaseFile(sqliteFileOf(config.dataDir))
  const db = config.databaseUrl
    ? createPostgresDb(createPgPool(config.databaseUrl))
    : createSqliteDb(openSqliteDatabase(sqliteFileOf(config.dataDir)))
  try {
    await migrate(db, MIGRATIONS)
  } catch (error) {
    await db.close().catch(() => {})
    throw error
  }
  return createSqlStores(db, options)
}
