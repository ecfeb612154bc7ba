/**
 * @module
 * Direct access to a test server's database, bypassing every service: what someone with write
 * access to the database could do (tamper tests). SQLite: a second connection to the file;
 * PostgreSQL: a plain client. Statements use `?` placeholders on both.
 */

import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import type { TestServer } from './test-server.js'

export interface RawDatabase {
  readonly dialect: 'sqlite' | 'postgres'
  run(sql: string, params?: readonly unknown[]): Promise<number>
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>
  /** Drops the unique indexes and the RecordID check that keep forks out of normal writes. */
  dropConstraints(): Promise<void>
  close(): Promise<void>
}

function numbered(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

export async function openRawDatabase(server: TestServer): Promise<RawDatabase> {
  if (server.backend === 'sqlite') {
    const db = new Database(join(server.config.dataDir, 'provenant.db'))
    db.pragma('busy_timeout = 10000')
    return {
      dialect: 'sqlite',
      run: async (sql, params = []) => db.prepare(sql).run(...params).changes,
      all: async <T>(sql: string, params: readonly unknown[] = []) => db.prepare(sql).all(...params) as T[],
      async dropConstraints() {
        db.exec('DROP INDEX IF EXISTS ledger_records_seq; DROP INDEX IF EXISTS ledger_records_prev')
        // A CHECK cannot be dropped in SQLite without rebuilding the table; the attacker's
        // connection ignores it instead.
        db.pragma('ignore_check_constraints = ON')
      },
      close: async () => {
        db.close()
      },
    }
  }
  const client = new pg.Client({ connectionString: server.config.databaseUrl })
  await client.connect()
  return {
    dialect: 'postgres',
    run: async (sql, params = []) => (await client.query(numbered(sql), [...params])).rowCount ?? 0,
    all: async <T>(sql: string, params: readonly unknown[] = []) => (await client.query(numbered(sql), [...params])).rows as T[],
    async dropConstraints() {
      await client.query(
        'DROP INDEX IF EXISTS ledger_records_seq; DROP INDEX IF EXISTS ledger_records_prev; ALTER TABLE ledger_records DROP CONSTRAINT IF EXISTS ledger_records_record_id',
      )
    },
    close: () => client.end(),
  }
}
