/**
 * @module
 * The storage port of the activity log (style notes §6.2): what the ledger service, the verifier and
 * the exporter need from persistence. Implemented in src/adapters/sql/sql-ledger-store.ts over the
 * SqlDb port, with the parts that differ per engine (the per-container lock, read snapshots) in
 * src/adapters/sqlite/ and src/adapters/postgres/.
 *
 * Tables (src/adapters/sql/migrations/0002-ledger.ts):
 *
 *     ledger_records(workspace_id, container_id, seq, record_id, prev_digest, ts, user_id, body, digest, …)
 *       UNIQUE (workspace_id, container_id, seq), UNIQUE (workspace_id, container_id, prev_digest),
 *       CHECK (record_id = lpad(seq, 12, '0'))      body and ts are TEXT, never jsonb/timestamptz
 *     ledger_heads(workspace_id, container_id, seq, digest, last_ts, range_peaks, checkpoint_size)
 *     ledger_nodes(workspace_id, container_id, level, idx, hash)        levels 4, 8, 12, … only
 *     ledger_checkpoints(workspace_id, container_id, size, issued_at, note)
 *
 * The heads log is the container HEADS_LOG_CONTAINER_ID of the same tables (checkpoint.ts).
 */
import type { AppendBatchResult } from './append-batch.js'
import type { HeadsLogEntry } from './checkpoint.js'
import type { ChainTip, ContainerRef, StoredHead, StoredRecord } from './ledger-types.js'
import type { CompactRange } from './merkle.js'

/** Merkle node levels kept in ledger_nodes: every fourth (a node of another level costs at most 16 reads). */
export const STORED_NODE_LEVEL_STEP = 4

/** What the head row says besides the tip: the compact range and the newest checkpointed size. */
export interface HeadState {
  readonly tip: ChainTip
  readonly range: CompactRange
  /** Size of the newest checkpoint saved for this container (0 before the first). */
  readonly checkpointSize: number
  /** False when the container had no head row (a new container, or a deleted head). */
  readonly existed: boolean
  /**
   * Read by the append path only (appendBatch's `build`), so it can refuse to extend a chain whose
   * head is not the newest checkpoint this server signed (design §2 step 3): the newest stored
   * checkpoint note, and the highest stored record. Undefined where not read.
   */
  readonly newestCheckpointNote?: string | null
  readonly storedTip?: { readonly seq: number; readonly digest: Uint8Array } | null
}

/** A signed checkpoint note as stored. */
export interface StoredCheckpoint {
  readonly size: number
  /** Milliseconds since the epoch. */
  readonly issuedAt: number
  readonly note: string
}

/** Filters of an activity-log query (spec 4.5); timestamps are the stored form, `to` exclusive. */
export interface RecordFilter {
  readonly entityType?: string
  readonly actionType?: string
  readonly userId?: string
  readonly from?: string
  readonly to?: string
}

export interface RecordPage {
  readonly limit: number
  readonly offset: number
  /** `desc`: newest first. */
  readonly order: 'asc' | 'desc'
}

/**
 * Raised when the database refused an append because of lock contention it resolved by aborting us
 * (a PostgreSQL deadlock between writers that took containers in different orders). The whole
 * batch was rolled back and may be retried as is.
 */
export class LedgerContentionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'LedgerContentionError'
  }
}

export interface LedgerStore {
  /**
   * Appends one batch to one container inside the transaction the store is bound to (or its own
   * when unbound). It MUST first take the container's lock in the database (PostgreSQL: a
   * transaction-level advisory lock; SQLite: the single writer of BEGIN IMMEDIATE), then read the
   * head row, call `build` with what it says (the genesis tip and an empty range when there is no
   * head row), insert the returned records and the completed Merkle nodes, and upsert the head row.
   * Appends to one container are thereby serialised in the database, never in process memory, so
   * several processes cannot fork a chain (design §2, §8). `build` is pure and may throw: then
   * nothing is written. `checkpoint`, when given, is called with the result under the same lock
   * and may return a checkpoint to store in the same transaction (the head row's checkpoint size
   * then follows it). Resolves with what `build` and `checkpoint` returned and the head state the
   * batch started from.
   */
  appendBatch(
    container: ContainerRef,
    build: (head: HeadState) => AppendBatchResult,
    checkpoint?: (result: AppendBatchResult, before: HeadState) => StoredCheckpoint | null,
  ): Promise<{ readonly result: AppendBatchResult; readonly before: HeadState; readonly checkpoint: StoredCheckpoint | null }>

  /** Stores a copy of a checkpoint this server signed and makes its size the head row's newest checkpointed size. */
  saveCheckpoint(container: ContainerRef, checkpoint: StoredCheckpoint): Promise<void>

  /**
   * Runs `read` on one read snapshot (PostgreSQL: REPEATABLE READ READ ONLY; SQLite: a read
   * transaction on a separate connection, so a long verify never holds up writers), so the head
   * row, records, checkpoints and heads log it sees belong together and concurrent appends cannot
   * cause a false MISSING or HEAD_MISMATCH. The snapshot is released when `read` settles.
   */
  readSnapshot<T>(read: (snapshot: LedgerSnapshot) => Promise<T>): Promise<T>

  /** Every container with a head row or records, per workspace (for `provenant verify`). */
  containers(workspaceId?: string): Promise<ContainerRef[]>
}

/** One consistent view of the store. It MUST only be used inside readSnapshot's callback. */
export interface LedgerSnapshot {
  /** The head row as the verifier sees it, or null when the container has none. */
  head(container: ContainerRef): Promise<StoredHead | null>
  /** The head row with its compact range (for roots and proofs), or null. */
  headState(container: ContainerRef): Promise<HeadState | null>
  /**
   * The stored records with fromSeq <= seq <= toSeq (defaults: all), exactly as stored, ordered by
   * seq and then by physical order. Streams in pages; never loads the container into memory.
   */
  records(container: ContainerRef, fromSeq?: number, toSeq?: number): AsyncIterable<StoredRecord>
  /** One page of the records matching `filter`, and how many match in all. */
  query(
    container: ContainerRef,
    filter: RecordFilter,
    page: RecordPage,
  ): Promise<{ readonly records: readonly StoredRecord[]; readonly total: number }>
  /** The first and last seq whose timestamp lies in [from, to) (either bound optional), or null. */
  seqRange(container: ContainerRef, from?: string, to?: string): Promise<{ readonly first: number; readonly last: number } | null>
  /** The newest stored checkpoint (largest size, then latest issued), or null. */
  latestCheckpoint(container: ContainerRef): Promise<StoredCheckpoint | null>
  /** The stored checkpoints of exactly these sizes. */
  checkpointsOfSize(container: ContainerRef, sizes: readonly number[]): Promise<StoredCheckpoint[]>
  /**
   * Entries of the workspace heads log that name `containerId`, read from the heads records' stored
   * bodies: at most `limit`, always including the largest size, the rest spread over the history.
   */
  headsLog(workspaceId: string, containerId: string, limit: number): Promise<HeadsLogEntry[]>
  /**
   * Perfect-subtree hashes (merkle.ts NodeSource semantics), keyed `level/index`. Level 0 is the
   * record digests; levels the node table does not keep are recomputed from the level below that
   * it does. Throws when a needed record or node is missing (a tampered or broken store).
   */
  nodes(container: ContainerRef, wanted: readonly { readonly level: number; readonly index: number }[]): Promise<Map<string, Uint8Array>>
}
