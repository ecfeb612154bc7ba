/**
 * @module
 * SqlDb on better-sqlite3: WAL, foreign keys, a busy timeout, synchronous=FULL (a commit is
 * durable when it returns: design §8), prepared-statement cache, and one async mutex so that a
 * transaction's statements never interleave with another request's (better-sqlite3 is one
 * connection; an `await` inside a transaction would otherwise let others write into it).
 */
import Database from 'better-sqlite3'
import type { SqlDb } from '../sql-db.js'

export interface OpenSqliteOptions {
  readonly readonly?: boolean
}

export function openSqliteDatabase(file: string, options: OpenSqliteOptions = {}): Database.Database {
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false })
  db.pragma('busy_timeout = 10000')
  if (!options.readonly) {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
  }
  db.pragma('foreign_keys = ON')
  return db
}

class Mutex {
  #tail: Promise<void> = Promise.resolve()
  lock(): Promise<() => void> {
    let release!: () => void
    const next = new Promise<void>((resolve) => { release = resolve })
    const acquired = this.#tail.then(() => release)
    this.#tail = this.#tail.then(() => next)
    return acquired
  }
}

function normalise(params: readonly unknown[]): unknown[] {
  // better-sqlite3 binds booleans only as numbers and undefined not at all.
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p === undefined ? null : p))
}

export function createSqliteDb(db: Database.Database): SqlDb {
  const statements = new Map<string, Database.Statement>()
  const mutex = new Mutex()

  function prepare(sql: string): Database.Statement {
    let statement = statements.get(sql)
    if (!statement) {
      statement = db.prepare(sql)
      if (statements.size > 2000) statements.clear()
      statements.set(sql, statement)
    }
    return statement
  }

  function handle(inTransaction: boolean): SqlDb {
    const guarded = async <T>(fn: () => T): Promise<T> => {
      if (inTransaction) return fn()
      const release = await mutex.lock()
      try {
        return fn()
      } finally {
        release()
      }
    }
    const self: SqlDb = {
      dialect: 'sqlite',
      inTransaction,
      all: <T>(sql: string, params: readonly unknown[] = [], options?: { exactIntegers?: boolean }) => guarded(() => {
        const statement = prepare(sql)
        if (!options?.exactIntegers) return statement.all(...normalise(params)) as T[]
        statement.safeIntegers(true)
        try {
          return statement.all(...normalise(params)) as T[]
        } finally {
          statement.safeIntegers(false)
        }
      }),
      get: <T>(sql: string, params: readonly unknown[] = []) => guarded(() => prepare(sql).get(...normalise(params)) as T | undefined),
      run: (sql, params = []) => guarded(() => ({ changes: prepare(sql).run(...normalise(params)).changes })),
      exec: (sql) => guarded(() => { db.exec(sql) }),
      async transaction<T>(fn: (tx: SqlDb) => Promise<T>): Promise<T> {
        if (inTransaction) return fn(self)
        const release = await mutex.lock()
        try {
          db.exec('BEGIN IMMEDIATE')
          try {
            const result = await fn(txHandle)
            db.exec('COMMIT')
            return result
          } catch (error) {
            if (db.inTransaction) db.exec('ROLLBACK')
            throw error
          }
        } finally {
          release()
        }
      },
      async close() {
        const release = await mutex.lock()
        try {
          if (db.open) db.close()
        } finally {
          release()
        }
      },
    }
    return self
  }

  const txHandle = handle(true)
  return handle(false)
}
