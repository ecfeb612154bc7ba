/**
 * @module
 * The transaction a domain operation runs in, carried by the async context (issue 19 item 4). Code
 * running inside `stores.transaction(fn)` that records a decision joins that transaction even when
 * it does not pass `tx`: a forgotten argument can no longer wait forever for the writer its own
 * transaction holds (SQLite), nor commit a record on its own that the transaction then rolls back.
 * The storage adapter opens the context (src/adapters/sql/sql-stores.ts); it closes when `fn` settles,
 * so a timer started inside a transaction never writes into it after the commit.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Stores } from './stores.js'

interface OpenTransaction {
  readonly tx: Stores
  open: boolean
}

const current = new AsyncLocalStorage<OpenTransaction>()

/** Runs `fn` with `tx` as the open transaction of everything it awaits (for the storage adapter). */
export async function runInTransaction<T>(tx: Stores, fn: () => Promise<T>): Promise<T> {
  const entry: OpenTransaction = { tx, open: true }
  try {
    return await current.run(entry, fn)
  } finally {
    entry.open = false
  }
}

/** The transaction the caller is running in, or undefined outside one. */
export function openTransaction(): Stores | undefined {
  const entry = current.getStore()
  return entry?.open ? entry.tx : undefined
}
