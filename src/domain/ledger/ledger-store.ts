/**
 * @module
 * The storage port the ledger core expects (style notes §6.2): what the activity log, the verifier
 * and the corrections log need from persistence. Implemented natively per backend in
 * src/storage/<backend>/ (a later phase); the pure core in this folder never touches SQL.
 *
 * Tables the adapters are expected to keep (names are the adapters' choice):
 *
 *     events(container, seq, record_id, prev_digest, ts, user_id, body, digest)     body = the canonical text
 *       PRIMARY KEY (container, seq), UNIQUE (container, prev_digest),
 *       CHECK (record_id = lpad(seq, 12, '0'))                  body and ts are TEXT, never jsonb/timestamptz
 *     heads(container PRIMARY KEY, seq, digest, last_ts, range_peaks)   range_peaks = CompactRange.serialize()
 *     merkle_nodes(container, level, idx, hash)  PRIMARY KEY (container, level, idx)   completed subtrees only
 *     checkpoints(container, size, note)          signed notes as issued (a convenience copy)
 *
 * The heads log is the container HEADS_LOG_CONTAINER_ID of the same tables (checkpoint.ts).
 */
import type { AppendBatchResult } from './append-batch.js'
import type { HeadsLogEntry } from './checkpoint.js'
import type { ChainTip, ContainerRef, StoredHead, StoredRecord } from './ledger-types.js'
import type { CompactRange } from './merkle.js'

export interface LedgerStore {
  /**
   * Appends one batch to one container. Inside a single transaction the adapter MUST take the
   * container's lock in the database (PostgreSQL: pg_advisory_xact_lock on the container, or the
   * heads row FOR UPDATE; SQLite: BEGIN IMMEDIATE), read the heads row (genesisTip and an empty
   * range when there is none), call `build` with them, insert the returned records and completed
   * nodes, upsert the heads row from `head`, `tip.timestamp` and `range.serialize()`, and commit.
   * It MUST resolve only after the commit is durable, MUST NOT commit part of a batch, and MUST
   * serialise appends per container in the database, never in process memory (design §2, §8).
   * `build` is pure and may throw (invalid entry, container full): then nothing is written.
   */
  appendBatch(container: ContainerRef, build: (tip: ChainTip, range: CompactRange) => AppendBatchResult): Promise<AppendBatchResult>

  /**
   * Runs `read` on one read snapshot of the store (PostgreSQL: REPEATABLE READ READ ONLY; SQLite: one
   * read transaction), so the head row, records, checkpoints and heads log it sees belong together
   * and concurrent appends cannot cause a false MISSING or HEAD_MISMATCH.
   */
  readSnapshot<T>(read: (snapshot: LedgerSnapshot) => Promise<T>): Promise<T>

  /** Stores a copy of a checkpoint note the service signed for `container` at `size`. */
  saveCheckpoint(container: ContainerRef, size: number, note: string): Promise<void>
}

/** One consistent view of the store. Its iterables MUST only be used inside readSnapshot's callback. */
export interface LedgerSnapshot {
  /** The heads row, or null when the container was never written (or the row was deleted). */
  head(container: ContainerRef): Promise<StoredHead | null>
  /** The compact range stored with the heads row (for the current root and new checkpoints). */
  compactRange(container: ContainerRef): Promise<CompactRange | null>
  /**
   * The stored records with fromSeq <= seq <= toSeq (defaults: all), exactly as stored, ordered by
   * seq and then by physical order (rowid / ctid). MUST stream (cursor or paged keyset reads), not
   * load the container into memory.
   */
  records(container: ContainerRef, fromSeq?: number, toSeq?: number): AsyncIterable<StoredRecord>
  /** The first and last seq whose timestamp lies in [from, to), for date-range queries and exports. */
  seqRangeForTimes(container: ContainerRef, from: string, to: string): Promise<{ readonly first: number; readonly last: number } | null>
  /** The stored checkpoint notes of `container`, any order. */
  checkpoints(container: ContainerRef): Promise<readonly string[]>
  /** The workspace heads-log entries that name `container`. */
  headsLog(workspaceId: string, containerId: string): AsyncIterable<HeadsLogEntry>
  /** A completed subtree hash (merkle.ts NodeSource), for inclusion and consistency proofs. */
  node(container: ContainerRef, level: number, index: number): Promise<Uint8Array>
}
