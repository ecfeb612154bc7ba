/**
 * @module
 * SqlDb on better-sqlite3: WAL, foreign keys, a busy timeout, prepared-statement cache, and one
 * async mutex so that a transaction's statements never interleave with another request's
 * (better-sqlite3 is one connection; an `await` inside a transaction would otherwise let others
 * write into it). A write is durable when its promise resolves (design §8): COMMIT runs with
 * synchronous=NORMAL and the WAL is then fsynced off the event loop (wal-sync.ts), after the mutex
 * is released, so the next transaction commits while this one's fsync is in flight. WAL checkpoints
 * run in a worker thread (wal-checkpointer.ts), not in the COMMIT that crosses the threshold.
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { type AllOptions, quoteIdent, type SqlDb } from '../sql/sql-db.js'
import { sqliteEngine } from './sqlite-engine.js'
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js'
import { createWalSync, type WalSync } from './wal-sync.js'

export interface OpenSqliteOptions {
  readonly readonly?: boolean
}

/** A database file (or its -wal/-shm) others may read or write: refused at start, as master.key is. */
export class DatabaseFileModeError extends Error {}

/**
 * Makes sure the database file is private before SQLite opens it (issue 14 item 9). A new file is
 * created 0600 here, whatever the umask, and SQLite gives its -wal and -shm files the database
 * file's mode. An existing file (or -wal/-shm) readable or writable by group or others is refused
 * with the chmod to run, the same policy as master.key: the database holds password hashes, token
 * metadata, the activity log and every ingested row.
 */
export function ensurePrivateDatabaseFile(file: string): void {
  if (!existsSync(file)) {
    try {
      closeSync(openSync(file, 'wx', 0o600))
      chmodSync(file, 0o600)
    } catch (error) {
      // Another process created it first: it is checked below like any existing file.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (path !== file && !existsSync(path)) continue
    const mode = statSync(path).mode & 0o777
    if (mode & 0o077)
      throw new DatabaseFileModeError(
        `the database file ${path} is readable or writable by group or others (mode ${mode.toString(8).padStart(4, '0')}); run: chmod 600 ${file}*`,
      )
  }
}

export function openSqliteDatabase(file: string, options: OpenSqliteOptions = {}): Database.Database {
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false })
  db.pragma('busy_timeout = 10000')
  if (!options.readonly) {
    db.pragma('journal_mode = WAL')
    // Durable before acknowledged all the same: createSqliteDb fsyncs the WAL after each commit.
    db.pragma('synchronous = NORMAL')
  }
  db.pragma('foreign_keys = ON')
  return db
}

class Mutex {
  #tail: Promise<void> = Promise.resolve()
  lock(): Promise<() => void> {
    let release!: () => void
    const next = new Promise<void>((resolve) => {
      release = resolve
    })
    const acquired = this.#tail.then(() => release)
    this.#tail = this.#tail.then(() => next)
    return acquired
  }
}

/** better-sqlite3 binds booleans only as numbers and undefined not at all. */
const bindable = (p: unknown): unknown => (typeof p === 'boolean' ? (p ? 1 : 0) : p === undefined ? null : p)

function normalise(params: readonly unknown[]): unknown[] {
  return params.map(bindable)
}

/**
 * Parameters per statement of insertMany: 32 rows of the ingest bench's 8 columns. A statement of
 * 30,000 parameters (a VDBE program of that size, prepared anew for each batch size) cost 70% more
 * CPU per row, one row per call 50% more; 16 to 64 rows a statement are alike (docs/decisions.md).
 */
const INSERT_MANY_PARAMETERS = 256

export function createSqliteDb(db: Database.Database): SqlDb {
  const statements = new Map<string, Database.Statement>()
  const mutex = new Mutex()
  const walSync: WalSync | undefined = db.memory || db.readonly ? undefined : createWalSync(`${db.name}-wal`)
  // checkpoints (and their two fsyncs) in a worker thread; the writer takes them back if it stops
  let checkpointer: WalCheckpointer | undefined
  if (walSync) {
    db.pragma('wal_autocheckpoint = 0')
    checkpointer = startWalCheckpointer(db.name, () => {
      if (db.open) db.pragma('wal_autocheckpoint = 1000')
    })
  }
  /** After a write outside a transaction, or a COMMIT: wait until it is on disk. */
  const durable = async (): Promise<void> => {
    await walSync?.durable()
  }

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
      engine: sqliteEngine,
      inTransaction,
      all: <T>(sql: string, params: readonly unknown[] = [], options?: AllOptions) =>
        guarded(() => {
          const statement = prepare(sql)
          if (!options?.exactIntegers && !options?.arrays) return statement.all(...normalise(params)) as T[]
          // the statement is cached: its modes are set for this call only
          if (options.exactIntegers) statement.safeIntegers(true)
          if (options.arrays) statement.raw(true)
          try {
            return statement.all(...normalise(params)) as T[]
          } finally {
            if (options.exactIntegers) statement.safeIntegers(false)
            if (options.arrays) statement.raw(false)
          }
        }),
      get: <T>(sql: string, params: readonly unknown[] = []) => guarded(() => prepare(sql).get(...normalise(params)) as T | undefined),
      run: async (sql, params = []) => {
        const result = await guarded(() => ({ changes: prepare(sql).run(...normalise(params)).changes }))
        if (!inTransaction && result.changes > 0) await durable()
        return result
      },
      exec: async (sql) => {
        await guarded(() => {
          db.exec(sql)
        })
        if (!inTransaction) await durable()
      },
      async insertMany(table, columns, values) {
        if (values.length === 0) return
        if (!inTransaction) return self.transaction((tx) => tx.insertMany(table, columns, values))
        const width = columns.length
        const rowCount = values.length / width
        if (!Number.isInteger(rowCount)) throw new Error(`insertMany: ${values.length} values are not rows of ${width} columns`)
        const head = `INSERT INTO ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) VALUES `
        const tuple = `(${columns.map(() => '?').join(', ')})`
        const rowsPerStatement = Math.max(1, Math.floor(INSERT_MANY_PARAMETERS / width))
        const many = prepare(head + new Array(rowsPerStatement).fill(tuple).join(', '))
        const params = new Array<unknown>(rowsPerStatement * width)
        let next = 0
        for (let left = rowCount; left >= rowsPerStatement; left -= rowsPerStatement) {
          for (let i = 0; i < params.length; i++) params[i] = bindable(values[next++])
          // as arguments, not one array: better-sqlite3 reads an array's elements by generic lookups (20% more CPU per row)
          many.run(...params)
        }
        // the last rows (fewer than a statement's) one at a time: two cached statements per table
        const one = prepare(head + tuple)
        const row = new Array<unknown>(width)
        while (next < values.length) {
          for (let i = 0; i < width; i++) row[i] = bindable(values[next++])
          one.run(...row)
        }
      },
      async transaction<T>(fn: (tx: SqlDb) => Promise<T>): Promise<T> {
        if (inTransaction) return fn(self)
        const release = await mutex.lock()
        let result: T
        try {
          db.exec('BEGIN IMMEDIATE')
          try {
            result = await fn(txHandle)
            db.exec('COMMIT')
          } catch (error) {
            if (db.inTransaction) db.exec('ROLLBACK')
            throw error
          }
        } finally {
          release()
        }
        await durable()
        return result
      },
      async close() {
        const release = await mutex.lock()
        try {
          await checkpointer?.stop()
          if (db.open) db.close()
          walSync?.close()
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
