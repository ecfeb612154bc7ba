/**
 * @module
 * Applies pending migrations at start, under the engine's migration lock (PostgreSQL: an advisory
 * lock; SQLite: BEGIN IMMEDIATE itself), so several processes starting at once apply each
 * migration exactly once.
 */
import type { Migration } from './migrations/migration.js'
import type { SqlDb } from './sql-db.js'

const MIGRATION_LOCK = 72_616_510 // arbitrary constant naming "provenant migrations"

export async function migrate(db: SqlDb, migrations: readonly Migration[]): Promise<string[]> {
  const applied: string[] = []
  const ordered = [...migrations].sort((a, b) => a.id.localeCompare(b.id))
  await db.transaction(async (tx) => {
    await tx.engine.lockMigrations(tx, MIGRATION_LOCK)
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)')
    const done = new Set((await tx.all<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id))
    for (const migration of ordered) {
      if (done.has(migration.id)) continue
      await tx.exec(tx.engine.migrationSql(migration))
      await tx.run('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)', [migration.id, Date.now()])
      applied.push(migration.id)
    }
  })
  return applied
}
