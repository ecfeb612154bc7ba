/**
 * @module
 * The ledger's SQLite specifics. Appends need no lock of their own: every write transaction is
 * BEGIN IMMEDIATE on the one writer connection, so appends to a container are serialised by SQLite.
 * Read snapshots use separate read-only connections to the same file (WAL readers never block the
 * writer), so a whole-chain verify or a long export never holds up appends.
 */
import type Database from 'better-sqlite3'
import type { SqlDb } from '../sql/sql-db.js'
import { type LedgerBackend, RECORD_PAGE_SQL, type RecordPageReader } from '../sql/sql-ledger-store.js'
import { createSqliteDb, openSqliteDatabase } from './sqlite-db.js'

/** Idle read connections kept for reuse. */
const MAX_IDLE_READERS = 4

export function createSqliteLedgerBackend(writer: SqlDb): LedgerBackend {
  let file: string | undefined
  const idle: { raw: Database.Database; db: SqlDb; pages: RecordPageReader }[] = []
  let closed = false

  async function databaseFile(): Promise<string> {
    if (file === undefined) {
      const rows = await writer.all<{ name: string; file: string }>('PRAGMA database_list')
      const main = rows.find((r) => r.name === 'main')
      if (!main?.file) throw new Error('the ledger needs a file-backed SQLite database (an in-memory database has no second connection)')
      file = main.file
    }
    return file
  }

  interface Reader {
    raw: Database.Database
    db: SqlDb
    pages: RecordPageReader
  }

  async function reader(): Promise<Reader> {
    const reused = idle.pop()
    if (reused) return reused
    const raw = openSqliteDatabase(await databaseFile(), { readonly: true })
    // Rows as arrays: a whole-chain verify reads every record, and per-row objects were a third of its time.
    const page = raw.prepare(RECORD_PAGE_SQL).raw(true)
    const pages: RecordPageReader = (c, afterSeq, afterId, toSeq, limit) =>
      page.all(c.workspaceId, c.containerId, afterSeq, afterSeq, afterId, toSeq, limit) as unknown[][]
    return { raw, db: createSqliteDb(raw), pages }
  }

  return {
    // BEGIN IMMEDIATE (sqlite-db.ts) already made this transaction the only writer.
    lockContainer: async () => {},

    async withSnapshot(fn) {
      if (closed) throw new Error('the store is closed')
      const r = await reader()
      let healthy = true
      try {
        await r.db.exec('BEGIN')
        try {
          return await fn(r.db, r.pages)
        } finally {
          try {
            if (r.raw.inTransaction) await r.db.exec('COMMIT')
          } catch {
            healthy = false
          }
        }
      } finally {
        if (healthy && !closed && idle.length < MAX_IDLE_READERS) idle.push(r)
        else r.raw.close()
      }
    },

    async close() {
      closed = true
      for (const r of idle.splice(0)) r.raw.close()
    },
  }
}
