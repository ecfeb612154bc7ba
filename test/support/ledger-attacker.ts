/**
 * @module
 * What an attacker with write access to the database does to the activity log, for the tamper
 * suites: read a container's stored rows, compute a record's digest, point the head row at the
 * highest stored record (with a matching compact range), insert a forged record, and delete the anchors (checkpoints and
 * heads-log entries) above a size.
 */
import { containerIdForScope, recordDigest } from '../../src/domain/ledger/digest.js'
import { createCompactRange } from '../../src/domain/ledger/merkle.js'
import type { RawDatabase } from './raw-database.js'

/** A stored activity-log record row, as the database holds it. */
export interface LedgerRow {
  id: number
  seq: number
  record_id: string
  prev_digest: Buffer
  ts: string
  user_id: string
  body: string
  digest: Buffer
}

export function ledgerAttacker(db: () => RawDatabase, workspaceId: () => string) {
  async function rows(scope: string): Promise<LedgerRow[]> {
    const list = await db().all<LedgerRow>(
      'SELECT id, seq, record_id, prev_digest, ts, user_id, body, digest FROM ledger_records WHERE workspace_id = ? AND container_id = ? ORDER BY seq, id',
      [workspaceId(), containerIdForScope(scope)],
    )
    return list.map((r) => ({ ...r, id: Number(r.id), seq: Number(r.seq) }))
  }

  function digestOf(scope: string, r: Pick<LedgerRow, 'record_id' | 'prev_digest' | 'ts' | 'user_id' | 'body'>): Buffer {
    return recordDigest({
      workspaceId: workspaceId(),
      containerId: containerIdForScope(scope),
      recordId: r.record_id,
      prevDigest: r.prev_digest,
      timestamp: r.ts,
      userId: r.user_id,
      canonical: r.body,
    })
  }

  /** Points the head row at the highest stored record, with a matching compact range. */
  async function fixHead(scope: string): Promise<void> {
    const list = await rows(scope)
    const range = createCompactRange()
    for (const r of list) range.append(r.digest)
    const last = list[list.length - 1]!
    await db().run(
      'UPDATE ledger_heads SET seq = ?, digest = ?, last_ts = ?, range_peaks = ?, checkpoint_size = ? WHERE workspace_id = ? AND container_id = ?',
      [last.seq, last.digest, last.ts, range.serialize(), last.seq, workspaceId(), containerIdForScope(scope)],
    )
  }

  /** Deletes the stored checkpoints and heads-log entries of a container above `size` (a thorough attacker). */
  async function deleteAnchorsAbove(scope: string, size: number): Promise<void> {
    const container = containerIdForScope(scope)
    await db().run('DELETE FROM ledger_checkpoints WHERE workspace_id = ? AND container_id = ? AND size > ?', [
      workspaceId(),
      container,
      size,
    ])
    const heads = await db().all<{ id: number; body: string }>(
      "SELECT id, body FROM ledger_records WHERE workspace_id = ? AND container_id = 'heads' AND entity_id = ?",
      [workspaceId(), container],
    )
    for (const h of heads)
      if ((JSON.parse(h.body) as { details: { size: number } }).details.size > size)
        await db().run('DELETE FROM ledger_records WHERE id = ?', [h.id])
  }

  /** Inserts a record at `seq` with a digest computed as the server would (it links wherever `prev_digest` says). */
  async function insertRecord(
    scope: string,
    seq: number,
    r: Pick<LedgerRow, 'record_id' | 'prev_digest' | 'ts' | 'user_id' | 'body'>,
  ): Promise<void> {
    await db().run(
      'INSERT INTO ledger_records (workspace_id, container_id, seq, record_id, prev_digest, ts, user_id, body, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [workspaceId(), containerIdForScope(scope), seq, r.record_id, r.prev_digest, r.ts, r.user_id, r.body, digestOf(scope, r)],
    )
  }

  return { rows, digestOf, fixHead, deleteAnchorsAbove, insertRecord }
}
