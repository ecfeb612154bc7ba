/**
 * @module
 * The ledger's PostgreSQL specifics. Appends to a container are serialised with a
 * transaction-level advisory lock on the container (released at commit or rollback; works behind
 * PgBouncer's transaction pooling, unlike session locks), so any number of API processes can append
 * to one chain without forking it. Read snapshots are REPEATABLE READ READ ONLY transactions: the
 * head row, the records, the checkpoints and the heads log all come from one snapshot.
 */
import { createHash } from 'node:crypto'
import { LedgerContentionError } from '../../domain/ledger/ledger-store.js'
import type { ContainerRef } from '../../domain/ledger/ledger-types.js'
import type { SqlDb } from '../sql/sql-db.js'
import type { LedgerBackend } from '../sql/sql-ledger-store.js'

/** A signed 64-bit lock key per (workspace, container). A collision only makes two chains share a lock. */
export function containerLockKey(container: ContainerRef): string {
  const digest = createHash('sha256').update(`provenant/ledger\n${container.workspaceId}\n${container.containerId}`).digest()
  return digest.readBigInt64BE(0).toString()
}

const DEADLOCK = '40P01'

export function createPostgresLedgerBackend(db: SqlDb): LedgerBackend {
  return {
    async lockContainer(tx, container) {
      try {
        await tx.get('SELECT pg_advisory_xact_lock(?::bigint)', [containerLockKey(container)])
      } catch (error) {
        if ((error as { code?: string }).code === DEADLOCK) {
          throw new LedgerContentionError(`deadlock while locking ${container.containerId}; the batch was rolled back`, { cause: error })
        }
        throw error
      }
    },

    withSnapshot(fn) {
      return db.transaction(async (tx) => {
        // Must be the transaction's first statement (sql-db.ts has just sent BEGIN).
        await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY')
        return fn(tx)
      })
    },

    close: async () => {},
  }
}
