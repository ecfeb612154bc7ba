/**
 * @module
 * LedgerStore over the SqlDb port (design §8). Appends and snapshot reads are portable SQL; what
 * differs per engine (the per-container append lock, how a read snapshot is opened) comes from a
 * LedgerBackend: src/adapters/sqlite/sqlite-ledger-backend.ts, src/adapters/postgres/postgres-ledger-backend.ts.
 *
 * Hashed fields are written and read back exactly as hashed (body and ts as TEXT, digests as raw
 * bytes), and reads return what a row holds even when it no longer makes sense: the verifier, not
 * this adapter, decides what is wrong with a tampered row.
 */

import type { AppendBatchResult } from '../../domain/ledger/append-batch.js'
import { HEADS_LOG_CONTAINER_ID, type HeadsLogEntry, parseHeadsLogEntry } from '../../domain/ledger/checkpoint.js'
import { genesisDigest } from '../../domain/ledger/digest.js'
import {
  type HeadState,
  type LedgerSnapshot,
  type LedgerStore,
  type RecordFilter,
  type RecordPage,
  STORED_NODE_LEVEL_STEP,
  type StoredCheckpoint,
} from '../../domain/ledger/ledger-store.js'
import type { ContainerRef, StoredRecord } from '../../domain/ledger/ledger-types.js'
import { type CompletedNode, createCompactRange, deserializeCompactRange, nodeHash } from '../../domain/ledger/merkle.js'
import { type SqlDb, toNumber } from './sql-db.js'

/**
 * One page of records in (seq, id) order after (afterSeq, afterId), up to toSeq, as raw rows
 * `[id, seq, record_id, prev_digest, ts, user_id, body, digest]` (an engine's fastest read).
 */
export type RecordPageReader = (
  container: ContainerRef,
  afterSeq: number,
  afterId: number,
  toSeq: number,
  limit: number,
) => readonly (readonly unknown[])[]

/** What the two engines do differently for the ledger. */
export interface LedgerBackend {
  /** Takes the container's append lock inside the transaction `tx` is bound to (held until it ends). */
  lockContainer(tx: SqlDb, container: ContainerRef): Promise<void>
  /**
   * Runs `fn` with a handle bound to one read snapshot, released when `fn` settles, and optionally
   * a native page reader on the same snapshot (whole-chain verify reads millions of rows).
   */
  withSnapshot<T>(fn: (db: SqlDb, pages?: RecordPageReader) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** The records query every page reader runs (SQL shared by both engines). */
export const RECORD_PAGE_SQL = `SELECT id, seq, record_id, prev_digest, ts, user_id, body, digest FROM ledger_records
  WHERE workspace_id = ? AND container_id = ? AND (seq > ? OR (seq = ? AND id > ?)) AND seq <= ?
  ORDER BY seq, id LIMIT ?`

type Row = Record<string, unknown>

/** Records per page when streaming a container. */
const PAGE = 4096
/** Rows per multi-row INSERT (12 parameters each). */
const INSERT_CHUNK = 64

const RECORD_COLUMNS = 'id, seq, record_id, prev_digest, ts, user_id, body, digest'

function bytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v
  if (typeof v === 'string') return Buffer.from(v, 'utf8') // a tampered BLOB column holding text
  return new Uint8Array(0)
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v)
}

function recordOf(r: Row): StoredRecord {
  return {
    seq: toNumber(r['seq']),
    recordId: text(r['record_id']),
    prevDigest: bytes(r['prev_digest']),
    timestamp: text(r['ts']),
    userId: text(r['user_id']),
    canonical: text(r['body']),
    digest: bytes(r['digest']),
  }
}

/** entityType, entityId and actionType of a canonical body, for the look-up columns. */
function indexedFields(canonical: string): [string | null, string | null, string | null] {
  try {
    const b = JSON.parse(canonical) as Record<string, unknown>
    // PostgreSQL cannot store U+0000; these copies are only for look-ups, the body keeps the text.
    const s = (v: unknown) => (typeof v === 'string' ? v.replaceAll('\u0000', '\uFFFD') : null)
    return [s(b['entityType']), s(b['entityId']), s(b['actionType'])]
  } catch {
    return [null, null, null]
  }
}

function headStateOf(container: ContainerRef, r: Row | undefined): HeadState {
  if (!r) {
    return {
      tip: { seq: 0, digest: genesisDigest(container.workspaceId, container.containerId), timestamp: null },
      range: createCompactRange(),
      checkpointSize: 0,
      existed: false,
    }
  }
  const seq = toNumber(r['seq'])
  return {
    tip: { seq, digest: bytes(r['digest']), timestamp: r['last_ts'] === null || r['last_ts'] === undefined ? null : text(r['last_ts']) },
    range: deserializeCompactRange(seq, bytes(r['range_peaks'])),
    checkpointSize: toNumber(r['checkpoint_size']),
    existed: true,
  }
}

const HEAD_SQL = 'SELECT seq, digest, last_ts, range_peaks, checkpoint_size FROM ledger_heads WHERE workspace_id = ? AND container_id = ?'

/**
 * What the append path reads under the container's lock, in one round trip: the head row (or
 * nulls), the newest stored checkpoint note and the highest stored record, so the service can check
 * the head is exactly what it last signed before extending the chain (issue 14 item 1).
 */
// MAX() first, then the few rows of that size or seq: an index look-up on both engines, never a
// sort of the container's thousands of checkpoints (one per flush) on the hottest write path.
const APPEND_HEAD_SQL = `SELECT h.seq, h.digest, h.last_ts, h.range_peaks, h.checkpoint_size,
  (SELECT c.note FROM ledger_checkpoints c WHERE c.workspace_id = ? AND c.container_id = ?
     AND c.size = (SELECT MAX(m.size) FROM ledger_checkpoints m WHERE m.workspace_id = ? AND m.container_id = ?)
     ORDER BY c.id DESC LIMIT 1) AS cp_note,
  (SELECT MAX(r.seq) FROM ledger_records r WHERE r.workspace_id = ? AND r.container_id = ?) AS tip_seq,
  (SELECT r.digest FROM ledger_records r WHERE r.workspace_id = ? AND r.container_id = ?
     AND r.seq = (SELECT MAX(t.seq) FROM ledger_records t WHERE t.workspace_id = ? AND t.container_id = ?)
     ORDER BY r.id DESC LIMIT 1) AS tip_digest
FROM (SELECT 1 AS one) o LEFT JOIN ledger_heads h ON h.workspace_id = ? AND h.container_id = ?`

function appendHeadStateOf(container: ContainerRef, r: Row | undefined): HeadState {
  const hasHead = r !== undefined && r['seq'] !== null && r['seq'] !== undefined
  const base = headStateOf(container, hasHead ? r : undefined)
  const note = r?.['cp_note']
  const tipSeq = r?.['tip_seq']
  return {
    ...base,
    newestCheckpointNote: typeof note === 'string' ? note : null,
    storedTip: tipSeq === null || tipSeq === undefined ? null : { seq: toNumber(tipSeq), digest: bytes(r?.['tip_digest']) },
  }
}

/** Records per batch written by one statement where the engine has writable CTEs (12 parameters each; PostgreSQL's limit is 65,535). */
const ONE_STATEMENT_RECORDS = 1000

function recordParams(c: ContainerRef, r: StoredRecord): unknown[] {
  const [entityType, entityId, actionType] = indexedFields(r.canonical)
  return [
    c.workspaceId,
    c.containerId,
    r.seq,
    r.recordId,
    r.prevDigest,
    r.timestamp,
    r.userId,
    r.canonical,
    r.digest,
    entityType,
    entityId,
    actionType,
  ]
}

/** The Merkle nodes a batch completed that are stored (every STORED_NODE_LEVEL_STEP-th level). */
function storedNodes(result: AppendBatchResult): CompletedNode[] {
  return result.completedNodes.filter((n) => n.level > 0 && n.level % STORED_NODE_LEVEL_STEP === 0)
}

const nodeParams = (c: ContainerRef, n: CompletedNode): unknown[] => [c.workspaceId, c.containerId, n.level, n.index, n.hash]
const checkpointParams = (c: ContainerRef, cp: StoredCheckpoint): unknown[] => [c.workspaceId, c.containerId, cp.size, cp.issuedAt, cp.note]
const headParams = (c: ContainerRef, result: AppendBatchResult, checkpointSize: number): unknown[] => [
  c.workspaceId,
  c.containerId,
  result.head.seq,
  result.head.digest,
  result.tip.timestamp,
  result.range.serialize(),
  checkpointSize,
]

const RECORD_INSERT =
  'INSERT INTO ledger_records (workspace_id, container_id, seq, record_id, prev_digest, ts, user_id, body, digest, entity_type, entity_id, action_type) VALUES'
const RECORD_VALUES = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
const NODE_INSERT = 'INSERT INTO ledger_nodes (workspace_id, container_id, level, idx, hash) VALUES'
// DO UPDATE: a container whose head row was deleted starts again from genesis; its new nodes must
// replace the old ones so proofs describe the records now stored.
const NODE_CONFLICT = 'ON CONFLICT (workspace_id, container_id, level, idx) DO UPDATE SET hash = excluded.hash'
const HEAD_UPSERT = `INSERT INTO ledger_heads (workspace_id, container_id, seq, digest, last_ts, range_peaks, checkpoint_size) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (workspace_id, container_id) DO UPDATE SET seq = excluded.seq, digest = excluded.digest, last_ts = excluded.last_ts, range_peaks = excluded.range_peaks, checkpoint_size = excluded.checkpoint_size`
const CHECKPOINT_INSERT = 'INSERT INTO ledger_checkpoints (workspace_id, container_id, size, issued_at, note) VALUES (?, ?, ?, ?, ?)'

export function createSqlLedgerStore(db: SqlDb, backend: LedgerBackend): LedgerStore {
  /**
   * PostgreSQL: records, nodes, checkpoint and head in one statement (data-modifying CTEs), so a
   * container's append costs three round trips (lock, head, write) instead of six.
   */
  async function writeAllAtOnce(
    tx: SqlDb,
    c: ContainerRef,
    result: AppendBatchResult,
    checkpoint: StoredCheckpoint | null,
    checkpointSize: number,
  ): Promise<void> {
    const nodes = storedNodes(result)
    const parts: string[] = []
    const params: unknown[] = []
    parts.push(`r AS (${RECORD_INSERT} ${result.records.map(() => RECORD_VALUES).join(', ')} RETURNING 1)`)
    for (const r of result.records) params.push(...recordParams(c, r))
    if (nodes.length > 0) {
      parts.push(`n AS (${NODE_INSERT} ${nodes.map(() => '(?, ?, ?, ?, ?)').join(', ')} ${NODE_CONFLICT} RETURNING 1)`)
      for (const n of nodes) params.push(...nodeParams(c, n))
    }
    if (checkpoint !== null) {
      parts.push(`k AS (${CHECKPOINT_INSERT} RETURNING 1)`)
      params.push(...checkpointParams(c, checkpoint))
    }
    params.push(...headParams(c, result, checkpointSize))
    await tx.run(`WITH ${parts.join(', ')} ${HEAD_UPSERT}`, params)
  }

  async function insertRecords(
    tx: SqlDb,
    c: ContainerRef,
    result: AppendBatchResult,
    checkpoint: StoredCheckpoint | null,
    checkpointSize: number,
  ): Promise<void> {
    if (tx.engine.writableCtes && result.records.length <= ONE_STATEMENT_RECORDS)
      return writeAllAtOnce(tx, c, result, checkpoint, checkpointSize)
    const records = result.records
    for (let i = 0; i < records.length; i += INSERT_CHUNK) {
      const chunk = records.slice(i, i + INSERT_CHUNK)
      await tx.run(
        `${RECORD_INSERT} ${chunk.map(() => RECORD_VALUES).join(', ')}`,
        chunk.flatMap((r) => recordParams(c, r)),
      )
    }
    const nodes = storedNodes(result)
    for (let i = 0; i < nodes.length; i += INSERT_CHUNK) {
      const chunk = nodes.slice(i, i + INSERT_CHUNK)
      await tx.run(
        `${NODE_INSERT} ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')} ${NODE_CONFLICT}`,
        chunk.flatMap((n) => nodeParams(c, n)),
      )
    }
    if (checkpoint !== null) await tx.run(CHECKPOINT_INSERT, checkpointParams(c, checkpoint))
    await tx.run(HEAD_UPSERT, headParams(c, result, checkpointSize))
  }

  const store: LedgerStore = {
    async appendBatch(container, build, sign) {
      if (!db.inTransaction) return db.transaction((tx) => createSqlLedgerStore(tx, backend).appendBatch(container, build, sign))
      await backend.lockContainer(db, container)
      const w = container.workspaceId
      const c = container.containerId
      const before = appendHeadStateOf(container, await db.get<Row>(APPEND_HEAD_SQL, [w, c, w, c, w, c, w, c, w, c, w, c]))
      const result = build(before)
      const checkpoint = sign?.(result, before) ?? null
      const checkpointSize = checkpoint?.size ?? before.checkpointSize
      if (result.records.length > 0) await insertRecords(db, container, result, checkpoint, checkpointSize)
      else if (checkpoint !== null) await store.saveCheckpoint(container, checkpoint)
      return { result, before, checkpoint }
    },

    async saveCheckpoint(container, cp) {
      await db.run(CHECKPOINT_INSERT, [container.workspaceId, container.containerId, cp.size, cp.issuedAt, cp.note])
      // The newest checkpoint's size (not the largest ever: after a rollback the container is smaller).
      await db.run('UPDATE ledger_heads SET checkpoint_size = ? WHERE workspace_id = ? AND container_id = ?', [
        cp.size,
        container.workspaceId,
        container.containerId,
      ])
    },

    readSnapshot: (read) => backend.withSnapshot((snap, pages) => read(createSnapshot(snap, pages))),

    async containers(workspaceId) {
      const where = workspaceId === undefined ? '' : ' WHERE workspace_id = ?'
      const params = workspaceId === undefined ? [] : [workspaceId, workspaceId]
      // Containers the heads log names count too: one deleted with its head row is still verified
      // (and reported TRUNCATED against the heads log).
      const headsWhere = workspaceId === undefined ? '' : ' AND workspace_id = ?'
      const rows = await db.all<Row>(
        `SELECT workspace_id, container_id FROM ledger_heads${where}
         UNION SELECT DISTINCT workspace_id, container_id FROM ledger_records${where}
         UNION SELECT DISTINCT workspace_id, entity_id FROM ledger_records WHERE container_id = ? AND entity_id IS NOT NULL${headsWhere}
         ORDER BY 1, 2`,
        [...params, HEADS_LOG_CONTAINER_ID, ...(workspaceId === undefined ? [] : [workspaceId])],
      )
      return rows.map((r) => ({ workspaceId: text(r['workspace_id']), containerId: text(r['container_id']) }))
    },
  }
  return store
}

function filterSql(c: ContainerRef, f: RecordFilter): { where: string; params: unknown[] } {
  const parts = ['workspace_id = ?', 'container_id = ?']
  const params: unknown[] = [c.workspaceId, c.containerId]
  const add = (sql: string, v: unknown) => {
    parts.push(sql)
    params.push(v)
  }
  if (f.entityType !== undefined) add('entity_type = ?', f.entityType)
  if (f.actionType !== undefined) add('action_type = ?', f.actionType)
  if (f.userId !== undefined) add('user_id = ?', f.userId)
  if (f.from !== undefined) add('ts >= ?', f.from)
  if (f.to !== undefined) add('ts < ?', f.to)
  return { where: parts.join(' AND '), params }
}

function checkpointOf(r: Row): StoredCheckpoint {
  return { size: toNumber(r['size']), issuedAt: toNumber(r['issued_at']), note: text(r['note']) }
}

function recordOfRaw(r: readonly unknown[]): StoredRecord {
  return {
    seq: toNumber(r[1]),
    recordId: text(r[2]),
    prevDigest: bytes(r[3]),
    timestamp: text(r[4]),
    userId: text(r[5]),
    canonical: text(r[6]),
    digest: bytes(r[7]),
  }
}

/** The read half, over a handle bound to one snapshot (and the engine's page reader, if any). */
export function createSnapshot(db: SqlDb, pages?: RecordPageReader): LedgerSnapshot {
  const key = (level: number, index: number) => `${level}/${index}`

  /** Record digests for seq in [from, to] (level-0 nodes), the first row per seq. */
  async function leafDigests(c: ContainerRef, from: number, to: number, out: Map<string, Uint8Array>): Promise<void> {
    const rows = await db.all<Row>(
      'SELECT seq, digest FROM ledger_records WHERE workspace_id = ? AND container_id = ? AND seq >= ? AND seq <= ? ORDER BY seq, id',
      [c.workspaceId, c.containerId, from, to],
    )
    for (const r of rows) {
      const k = key(0, toNumber(r['seq']) - 1)
      if (!out.has(k)) out.set(k, bytes(r['digest']))
    }
  }

  async function storedNodes(c: ContainerRef, level: number, from: number, to: number, out: Map<string, Uint8Array>): Promise<void> {
    const rows = await db.all<Row>(
      'SELECT idx, hash FROM ledger_nodes WHERE workspace_id = ? AND container_id = ? AND level = ? AND idx >= ? AND idx <= ?',
      [c.workspaceId, c.containerId, level, from, to],
    )
    for (const r of rows) out.set(key(level, toNumber(r['idx'])), bytes(r['hash']))
  }

  return {
    async head(c) {
      const r = await db.get<Row>('SELECT seq, digest FROM ledger_heads WHERE workspace_id = ? AND container_id = ?', [
        c.workspaceId,
        c.containerId,
      ])
      return r ? { seq: toNumber(r['seq']), digest: bytes(r['digest']) } : null
    },

    async headState(c) {
      const r = await db.get<Row>(HEAD_SQL, [c.workspaceId, c.containerId])
      return r ? headStateOf(c, r) : null
    },

    async *records(c, fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER) {
      let afterSeq = fromSeq - 1
      let afterId = Number.MAX_SAFE_INTEGER // (fromSeq - 1, ∞): nothing of seq fromSeq - 1
      for (;;) {
        if (pages) {
          const rows = pages(c, afterSeq, afterId, toSeq, PAGE)
          for (const r of rows) yield recordOfRaw(r)
          if (rows.length < PAGE) return
          const last = rows[rows.length - 1]!
          afterSeq = toNumber(last[1])
          afterId = toNumber(last[0])
          continue
        }
        const rows = await db.all<Row>(RECORD_PAGE_SQL, [c.workspaceId, c.containerId, afterSeq, afterSeq, afterId, toSeq, PAGE])
        for (const r of rows) yield recordOf(r)
        if (rows.length < PAGE) return
        const last = rows[rows.length - 1]!
        afterSeq = toNumber(last['seq'])
        afterId = toNumber(last['id'])
      }
    },

    async query(c, filter, page: RecordPage) {
      const { where, params } = filterSql(c, filter)
      const dir = page.order === 'asc' ? 'ASC' : 'DESC'
      const rows = await db.all<Row>(
        `SELECT ${RECORD_COLUMNS} FROM ledger_records WHERE ${where} ORDER BY seq ${dir}, id ${dir} LIMIT ? OFFSET ?`,
        [...params, page.limit, page.offset],
      )
      const count = await db.get<Row>(`SELECT COUNT(*) AS n FROM ledger_records WHERE ${where}`, params)
      return { records: rows.map(recordOf), total: toNumber(count?.['n'] ?? 0) }
    },

    async seqRange(c, from, to) {
      const { where, params } = filterSql(c, { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) })
      const r = await db.get<Row>(`SELECT MIN(seq) AS first, MAX(seq) AS last FROM ledger_records WHERE ${where}`, params)
      if (!r || r['first'] === null || r['first'] === undefined) return null
      return { first: toNumber(r['first']), last: toNumber(r['last']) }
    },

    async latestCheckpoint(c) {
      const r = await db.get<Row>(
        'SELECT size, issued_at, note FROM ledger_checkpoints WHERE workspace_id = ? AND container_id = ? ORDER BY size DESC, id DESC LIMIT 1',
        [c.workspaceId, c.containerId],
      )
      return r ? checkpointOf(r) : null
    },

    async checkpointsOfSize(c, sizes) {
      if (sizes.length === 0) return []
      const rows = await db.all<Row>(
        `SELECT size, issued_at, note FROM ledger_checkpoints WHERE workspace_id = ? AND container_id = ? AND size IN (${sizes.map(() => '?').join(', ')}) ORDER BY size, id`,
        [c.workspaceId, c.containerId, ...sizes],
      )
      return rows.map(checkpointOf)
    },

    async headsLog(workspaceId, containerId, limit) {
      // container_id = 'heads' literally, so the planner picks the partial index ledger_records_heads.
      const base = `FROM ledger_records WHERE workspace_id = ? AND container_id = '${HEADS_LOG_CONTAINER_ID}' AND entity_id = ?`
      const params = [workspaceId, containerId]
      const count = toNumber((await db.get<Row>(`SELECT COUNT(*) AS n ${base}`, params))?.['n'] ?? 0)
      let rows: Row[]
      if (count <= limit) {
        rows = await db.all<Row>(`SELECT body ${base} ORDER BY seq`, params)
      } else {
        // The newest entry (largest size) and every k-th before it, so anchors spread over the history.
        const step = Math.ceil(count / Math.max(1, limit - 1))
        rows = await db.all<Row>(
          `SELECT body FROM (SELECT body, seq, ROW_NUMBER() OVER (ORDER BY seq DESC, id DESC) AS rn ${base}) numbered
           WHERE rn = 1 OR rn % ? = 0 ORDER BY seq`,
          [...params, step],
        )
      }
      const out: HeadsLogEntry[] = []
      for (const r of rows) {
        const entry = parseHeadsLogEntry(text(r['body']))
        if (entry !== null && entry.containerId === containerId) out.push(entry)
      }
      return out
    },

    async nodes(c, wanted) {
      const out = new Map<string, Uint8Array>()
      // Every requested node is either stored (level 0: a record digest; a multiple of the step: a
      // node row) or folded from the 2..16 stored nodes of the base level below it.
      const plan = wanted.map(({ level, index }) => {
        const base = level - (level % STORED_NODE_LEVEL_STEP)
        const span = 2 ** (level - base)
        return { level, index, base, from: index * span, to: (index + 1) * span - 1 }
      })
      const byBase = new Map<number, { from: number; to: number }[]>()
      for (const p of plan) {
        const list = byBase.get(p.base) ?? []
        list.push({ from: p.from, to: p.to })
        byBase.set(p.base, list)
      }
      for (const [base, ranges] of byBase) {
        ranges.sort((a, b) => a.from - b.from)
        const merged: { from: number; to: number }[] = []
        for (const r of ranges) {
          const last = merged[merged.length - 1]
          if (last && r.from <= last.to + 1) last.to = Math.max(last.to, r.to)
          else merged.push({ ...r })
        }
        for (const r of merged) {
          if (base === 0) await leafDigests(c, r.from + 1, r.to + 1, out)
          else await storedNodes(c, base, r.from, r.to, out)
        }
      }
      const result = new Map<string, Uint8Array>()
      for (const p of plan) {
        let level = p.base
        let hashes: Uint8Array[] = []
        for (let i = p.from; i <= p.to; i++) {
          const h = out.get(key(p.base, i))
          if (h === undefined) {
            throw new RangeError(
              p.base === 0
                ? `record ${String(i + 1).padStart(12, '0')} is missing from the store`
                : `Merkle node ${p.base}/${i} is missing from the store`,
            )
          }
          hashes.push(h)
        }
        while (level < p.level) {
          const next: Uint8Array[] = []
          for (let i = 0; i < hashes.length; i += 2) next.push(nodeHash(hashes[i]!, hashes[i + 1]!))
          hashes = next
          level++
        }
        result.set(key(p.level, p.index), hashes[0]!)
      }
      return result
    },
  }
}
