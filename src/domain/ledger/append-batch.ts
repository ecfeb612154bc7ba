/**
 * @module
 * The pure half of an append (design §8, ledger note §3.8): given the container's tip and compact
 * range, turn a batch of validated entries into the records to insert, the new head, and the
 * Merkle nodes the batch completed. A storage adapter calls this inside its per-container lock
 * (PostgreSQL advisory lock, SQLite's single writer), inserts everything in one transaction and
 * commits once per batch: that is group commit. Nothing here mutates its inputs, so a failed batch
 * leaves the caller's tip and range untouched and no partial batch can be committed.
 */

import { canonicalRecordBody, nextLedgerTimestamp, type RecordHasher } from './digest.js'
import type { ChainTip, RecordBodyInput, StoredHead, StoredRecord } from './ledger-types.js'
import type { CompactRange, CompletedNode } from './merkle.js'
import { formatRecordId, MAX_RECORD_SEQ } from './record-id.js'

/**
 * One record to append: the server-set actor and the caller's body fields, or the body's canonical
 * text already made with canonicalRecordBody (so a bad body is refused before it joins a batch).
 */
export type AppendEntry =
  | { readonly userId: string; readonly body: RecordBodyInput }
  | { readonly userId: string; readonly canonical: string }

export interface AppendBatchResult {
  /** In sequence order, exactly as they must be stored. */
  readonly records: readonly StoredRecord[]
  /** The new tip (for the next batch) and head row. */
  readonly tip: ChainTip
  readonly head: StoredHead
  /** The compact range after the batch (a new object; the input is not changed). */
  readonly range: CompactRange
  /** Perfect subtrees completed by this batch, for a node table serving proofs. */
  readonly completedNodes: readonly CompletedNode[]
}

/**
 * Builds the records of one batch. `range.size` MUST equal `tip.seq` (both describe the same
 * committed chain). Throws before producing anything if an entry is invalid or the container
 * would pass 999,999,999,999 records.
 */
export function appendBatch(
  hasher: RecordHasher,
  tip: ChainTip,
  range: CompactRange,
  entries: readonly AppendEntry[],
  nowMs: number,
): AppendBatchResult {
  if (range.size !== tip.seq) throw new RangeError(`compact range size ${range.size} does not match the tip ${tip.seq}`)
  if (tip.seq + entries.length > MAX_RECORD_SEQ) {
    throw new RangeError(`container is full: ${tip.seq} records plus ${entries.length} would pass ${MAX_RECORD_SEQ}`)
  }
  // Canonicalise everything first so a bad entry fails the batch before any digest is made.
  const prepared = entries.map((e) => {
    if (typeof e.userId !== 'string' || e.userId.length === 0) throw new TypeError('userId must be a non-empty string')
    return { userId: e.userId, canonical: 'canonical' in e ? e.canonical : canonicalRecordBody(e.body) }
  })
  const next = range.clone()
  const completed: CompletedNode[] = []
  const records: StoredRecord[] = []
  let prev = tip.digest
  let prevTs = tip.timestamp
  let seq = tip.seq
  for (const p of prepared) {
    seq++
    const recordId = formatRecordId(seq)
    const timestamp = nextLedgerTimestamp(nowMs, prevTs)
    const digest = hasher.digest(recordId, prev, timestamp, p.userId, p.canonical)
    records.push({ seq, recordId, prevDigest: prev, timestamp, userId: p.userId, canonical: p.canonical, digest })
    // The record digest is already the RFC 9162 leaf hash (digest.ts).
    for (const node of next.append(digest)) completed.push(node)
    prev = digest
    prevTs = timestamp
  }
  return {
    records,
    tip: { seq, digest: prev, timestamp: prevTs },
    head: { seq, digest: prev },
    range: next,
    completedNodes: completed,
  }
}

/** The tip of a container nothing was ever appended to. */
export function genesisTip(hasher: RecordHasher): ChainTip {
  return { seq: 0, digest: hasher.genesis, timestamp: null }
}
