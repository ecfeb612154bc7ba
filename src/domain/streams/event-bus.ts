/**
 * @module
 * The internal event bus: what was ingested and what changed, announced after commit. SQLite
 * deployments use the in-process bus; PostgreSQL deployments relay through LISTEN/NOTIFY so every
 * process hears every event (design §2, §9).
 */
import type { KqlValue } from '../../kql/index.js'
import type { WorkspaceChange } from '../changes/index.js'

/** Rows committed to a connection table: ids are workspace-wide and increase in commit order. */
export interface RowsIngested {
  readonly kind: 'rows'
  readonly workspaceId: string
  readonly connection: string
  readonly firstRowId: number
  readonly lastRowId: number
  readonly at: number
  /** The typed rows in declaration order, when the publisher is in this process (else read them). */
  readonly rows?: readonly (readonly KqlValue[])[]
}

export interface ChangeCommitted {
  readonly kind: 'change'
  readonly change: WorkspaceChange
}

export interface TokenRevoked {
  readonly kind: 'token-revoked'
  readonly workspaceId: string
  readonly tokenId: string
}

export type BusEvent = RowsIngested | ChangeCommitted | TokenRevoked

export interface EventBus {
  /** Announces an event to every subscriber in every process. Call only after the commit. */
  publish(event: BusEvent): void
  /** Returns an unsubscribe function. Handlers must not throw (errors are logged and dropped). */
  subscribe(handler: (event: BusEvent) => void): () => void
  close(): Promise<void>
}

/** The bus of a single process. */
export function createLocalEventBus(): EventBus {
  const handlers = new Set<(event: BusEvent) => void>()
  return {
    publish(event) {
      for (const handler of handlers) {
        try {
          handler(event)
        } catch {
          // A subscriber's failure must never reach the publisher (an ingest that already committed).
        }
      }
    },
    subscribe(handler) {
      handlers.add(handler)
      return () => handlers.delete(handler)
    },
    async close() {
      handlers.clear()
    },
  }
}
