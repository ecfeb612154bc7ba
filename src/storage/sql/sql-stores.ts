/**
 * @module
 * The Stores aggregate over one SqlDb: each port bound to the database or, inside transaction(),
 * to the transaction, with after-commit callbacks run only once the transaction has committed.
 */
import type { Stores } from '../../domain/stores.js'
import type { SqlDb } from '../sql-db.js'
import { createSqlAccessStore } from './sql-access-store.js'
import { createSqlChangeStore } from './sql-change-store.js'
import { createSqlConfigStore } from './sql-config-store.js'
import { createSqlConnectionDataStore } from './sql-connection-data-store.js'

export interface SqlStores extends Stores {
  readonly db: SqlDb
}

export function createSqlStores(db: SqlDb, onClose: () => Promise<void> = () => db.close()): SqlStores {
  return bind(db, undefined, onClose)
}

function bind(db: SqlDb, pending: (() => void)[] | undefined, onClose: () => Promise<void>): SqlStores {
  const stores: SqlStores = {
    backend: db.dialect,
    db,
    access: createSqlAccessStore(db),
    config: createSqlConfigStore(db),
    changes: createSqlChangeStore(db),
    data: createSqlConnectionDataStore(db),
    async transaction<T>(fn: (tx: Stores) => Promise<T>): Promise<T> {
      if (pending) return fn(stores)
      const callbacks: (() => void)[] = []
      const result = await db.transaction((txDb) => fn(bind(txDb, callbacks, onClose)))
      for (const callback of callbacks) callback()
      return result
    },
    afterCommit(fn) {
      if (pending) pending.push(fn)
      else fn()
    },
    close: onClose,
  }
  return stores
}
