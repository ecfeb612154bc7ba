/**
 * @module
 * The Stores aggregate over one SqlDb: each port bound to the database or, inside transaction(),
 * to the transaction, with after-commit callbacks run only once the transaction has committed.
 */
import type { WorkspaceChange } from '../../domain/changes/workspace-change.js'
import type { Stores } from '../../domain/stores.js'
import { runInTransaction } from '../../domain/unit-of-work.js'
import { createSqlAccessStore } from './sql-access-store.js'
import { createSqlChangeStore } from './sql-change-store.js'
import { createSqlConfigStore } from './sql-config-store.js'
import { createSqlConnectionDataStore } from './sql-connection-data-store.js'
import { createSqlConnectorStatusStore } from './sql-connector-status-store.js'
import { createSqlCorrectionStore } from './sql-correction-store.js'
import { createSqlCredentialStore } from './sql-credential-store.js'
import type { SqlDb } from './sql-db.js'
import { createSqlExportStore } from './sql-export-store.js'
import { createSqlLedgerStore, type LedgerBackend } from './sql-ledger-store.js'
import { createSqlProposalStore } from './sql-proposal-store.js'
import { createSqlSessionStore } from './sql-session-store.js'

export interface SqlStores extends Stores {
  readonly db: SqlDb
}

export interface SqlStoresOptions {
  /** Called after the commit of every workspace change (the event bus announces it). */
  readonly onChangeCommitted?: (change: WorkspaceChange) => void
}

/** `ledgerBackend`: the engine's locking and snapshot reads for the ledger (sqlite/, postgres/). */
export function createSqlStores(db: SqlDb, ledgerBackend: LedgerBackend, options: SqlStoresOptions = {}): SqlStores {
  return bind(db, undefined, options, ledgerBackend)
}

function bind(db: SqlDb, pending: (() => void)[] | undefined, options: SqlStoresOptions, ledgerBackend: LedgerBackend): SqlStores {
  const changeStore = createSqlChangeStore(db)
  const stores: SqlStores = {
    backend: db.engine.name,
    db,
    access: createSqlAccessStore(db),
    config: createSqlConfigStore(db),
    changes: {
      ...changeStore,
      async append(change) {
        const committed = await changeStore.append(change)
        const announce = options.onChangeCommitted
        if (announce) stores.afterCommit(() => announce(committed))
        return committed
      },
    },
    data: createSqlConnectionDataStore(db),
    corrections: createSqlCorrectionStore(db),
    proposals: createSqlProposalStore(db),
    sessions: createSqlSessionStore(db),
    ledger: createSqlLedgerStore(db, ledgerBackend),
    exports: createSqlExportStore(db),
    connectors: createSqlConnectorStatusStore(db),
    credentials: createSqlCredentialStore(db),
    async transaction<T>(fn: (tx: Stores) => Promise<T>): Promise<T> {
      if (pending) return fn(stores)
      const callbacks: (() => void)[] = []
      const result = await db.transaction((txDb) => {
        const tx = bind(txDb, callbacks, options, ledgerBackend)
        return runInTransaction(tx, () => fn(tx))
      })
      for (const callback of callbacks) callback()
      return result
    },
    afterCommit(fn) {
      if (pending) pending.push(fn)
      else fn()
    },
    close: async () => {
      await ledgerBackend.close()
      await db.close()
    },
  }
  return stores
}
