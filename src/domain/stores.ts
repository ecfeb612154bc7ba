/**
 * @module
 * The aggregate storage port the domain services receive. Each capability adds its store here.
 */
import type { AccessStore } from './access/access-store.js'
import type { ChangeStore } from './changes/workspace-change.js'
import type { ConnectorStatusStore } from './connectors/connector-status.js'
import type { CorrectionStore } from './corrections/correction.js'
import type { CredentialStore } from './credentials/credential-store.js'
import type { ExportStore } from './exports/export-store.js'
import type { ConnectionDataStore } from './ingest/connection-data-store.js'
import type { LedgerStore } from './ledger/ledger-store.js'
import type { ProposalStore } from './proposals/proposal-store.js'
import type { SessionStore } from './sessions/session-store.js'
import type { ConfigStore } from './workspace-config/config-store.js'

export interface Stores {
  readonly backend: 'sqlite' | 'postgres'
  readonly access: AccessStore
  readonly config: ConfigStore
  readonly changes: ChangeStore
  readonly data: ConnectionDataStore
  readonly corrections: CorrectionStore
  readonly proposals: ProposalStore
  readonly sessions: SessionStore
  /** The activity log's records, heads, Merkle nodes and checkpoints (design §8). */
  readonly ledger: LedgerStore
  readonly exports: ExportStore
  /** Pull connectors' status and cursors (issue 6, item 2). */
  readonly connectors: ConnectorStatusStore
  /** Connection credentials, sealed (design §11). */
  readonly credentials: CredentialStore
  /**
   * Runs `fn` in one database transaction with stores bound to it; commits when it resolves, rolls
   * back when it throws. Transactions on one store never interleave partially.
   */
  transaction<T>(fn: (tx: Stores) => Promise<T>): Promise<T>
  /**
   * Inside a transaction: runs `fn` after a successful commit (never after a rollback).
   * Outside one: runs it at once.
   */
  afterCommit(fn: () => void): void
  close(): Promise<void>
}
