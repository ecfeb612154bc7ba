/**
 * @module
 * The only place that picks a backend: SQLite in the data directory (embedded default) or
 * PostgreSQL when a database URL is given, with that engine's ledger backend. Runs migrations
 * before returning. It sits above `sql/`, `sqlite/` and `postgres/` so the engine adapters import
 * the SQL port and never the reverse.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createPgPool, createPostgresDb } from './postgres/postgres-db.js'
import { createPostgresLedgerBackend } from './postgres/postgres-ledger-backend.js'
import { migrate } from './sql/migrate.js'
import { MIGRATIONS } from './sql/migrations/index.js'
import type { SqlDb } from './sql/sql-db.js'
import type { LedgerBackend } from './sql/sql-ledger-store.js'
import { createSqlStores, type SqlStores, type SqlStoresOptions } from './sql/sql-stores.js'
import { createSqliteDb, ensurePrivateDatabaseFile, openSqliteDatabase } from './sqlite/sqlite-db.js'
import { createSqliteLedgerBackend } from './sqlite/sqlite-ledger-backend.js'

export interface StorageConfig {
  readonly dataDir: string
  readonly databaseUrl: string | undefined
}

export function sqliteFileOf(dataDir: string): string {
  return join(dataDir, 'provenant.db')
}

export async function openStores(config: StorageConfig, options: SqlStoresOptions = {}): Promise<SqlStores> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  const { db, ledgerBackend } = config.databaseUrl ? openPostgres(config.databaseUrl) : openSqlite(sqliteFileOf(config.dataDir))
  try {
    await migrate(db, MIGRATIONS)
  } catch (error) {
    await db.close().catch(() => {})
    throw error
  }
  return createSqlStores(db, ledgerBackend, options)
}

interface OpenedEngine {
  readonly db: SqlDb
  readonly ledgerBackend: LedgerBackend
}

function openSqlite(file: string): OpenedEngine {
  ensurePrivateDatabaseFile(file)
  const db = createSqliteDb(openSqliteDatabase(file))
  return { db, ledgerBackend: createSqliteLedgerBackend(db) }
}

function openPostgres(databaseUrl: string): OpenedEngine {
  const db = createPostgresDb(createPgPool(databaseUrl))
  return { db, ledgerBackend: createPostgresLedgerBackend(db) }
}
