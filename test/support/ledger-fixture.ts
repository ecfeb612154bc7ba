/**
 * @module
 * An in-memory activity-log container for tests: it appends honestly through the real append path
 * (append-batch.ts), issues signed checkpoints and heads-log entries, and then lets a test tamper
 * with the stored rows the way someone with database write access could (UPDATE, DELETE, INSERT
 * with constraints dropped). `scan()` returns the rows as `ORDER BY seq, rowid` would.
 */

import type { KeyObject } from 'node:crypto'
import { createHash } from 'node:crypto'
import { type AppendEntry, appendBatch, genesisTip } from '../../src/domain/ledger/append-batch.js'
import { checkpointOrigin, type HeadsLogEntry, signCheckpoint } from '../../src/domain/ledger/checkpoint.js'
import { canonicalRecordBody, containerIdForScope, createRecordHasher, type RecordHasher } from '../../src/domain/ledger/digest.js'
import type { ChainTip, ContainerRef, StoredHead, StoredRecord } from '../../src/domain/ledger/ledger-types.js'
import { type CompactRange, createCompactRange } from '../../src/domain/ledger/merkle.js'
import { formatRecordId } from '../../src/domain/ledger/record-id.js'
import {
  createNoteSigner,
  ed25519PrivateKeyFromSeed,
  type NoteSigner,
  type NoteVerifierKey,
  parseVerifierKey,
} from '../../src/domain/ledger/signed-note.js'
import { type VerifyResult, type VerifyVerdict, verifyChainSync } from '../../src/domain/ledger/verify-chain.js'
import type { JsonObject } from '../../src/shared/strict-json.js'

export const LOG_NAME = 'provenant.test'
export const KEY_NAME = 'provenant.test/activity-log'
const START_MS = Date.parse('2026-01-01T00:00:00.000Z')

/** A deterministic signing key per label (so tests can make "another server's" key). */
export function testKey(label = 'provenant test signing key'): { key: KeyObject; signer: NoteSigner; verifier: NoteVerifierKey } {
  const key = ed25519PrivateKeyFromSeed(createHash('sha256').update(label).digest())
  const signer = createNoteSigner(KEY_NAME, key)
  return { key, signer, verifier: parseVerifierKey(signer.vkey) }
}

/** A mutable stored row (what a privileged attacker can change). */
export interface Row {
  rowid: number
  seq: number
  recordId: string
  prevDigest: Buffer
  timestamp: string
  userId: string
  canonical: string
  digest: Buffer
}

export interface VerifyOptions {
  readonly recordId?: string | null
  readonly trustedCheckpoint?: string | null
  readonly useStoredCheckpoints?: boolean
  readonly trustedKeys?: readonly NoteVerifierKey[]
  readonly forkWindow?: number
  /** The writer signs every batch (the service): records past every checkpoint are UNCOVERED. */
  readonly requireCoverage?: boolean
}

export class LedgerFixture {
  readonly container: ContainerRef
  readonly origin: string
  readonly hasher: RecordHasher
  readonly signing = testKey()
  /** The stored rows in physical (rowid) order. */
  rows: Row[] = []
  head: StoredHead | null = null
  /** The `checkpoints` table: signed notes as issued. */
  storedCheckpoints: string[] = []
  /** The heads-log entries recorded for this container. */
  headsLog: HeadsLogEntry[] = []
  private tip: ChainTip
  private range: CompactRange = createCompactRange()
  private clockMs = START_MS
  private nextRowid = 1

  constructor(scopeKey = 'plant-7/line-1', workspaceId = 'wks_test') {
    this.container = { workspaceId, containerId: containerIdForScope(scopeKey) }
    this.origin = checkpointOrigin(LOG_NAME, this.container)
    this.hasher = createRecordHasher(workspaceId, this.container.containerId)
    this.tip = genesisTip(this.hasher)
  }

  /** Appends `n` records honestly (one batch), as the service would, and updates the head row. */
  append(n: number, userId = 'acc_alice'): this {
    const entries: AppendEntry[] = Array.from({ length: n }, (_, i) => ({
      userId,
      body: {
        ScopeKey: 'plant-7/line-1',
        entityType: 'batch',
        entityId: `B-${this.tip.seq + i + 1}`,
        actionType: 'update',
        details: { n: this.tip.seq + i + 1 },
      },
    }))
    this.clockMs += 1000
    const result = appendBatch(this.hasher, this.tip, this.range, entries, this.clockMs)
    for (const r of result.records) this.rows.push(toRow(r, this.nextRowid++))
    this.tip = result.tip
    this.range = result.range
    this.head = result.head
    return this
  }

  /** Issues a signed checkpoint of the honest chain as it stands, stores a copy, records it in the heads log. */
  checkpoint(time = Math.floor(this.clockMs / 1000)): string {
    const note = signCheckpoint(
      { origin: this.origin, size: this.range.size, root: this.range.root() },
      this.signing.signer,
      this.signing.key,
      time,
    )
    this.storedCheckpoints.push(note)
    this.headsLog.push({ containerId: this.container.containerId, size: this.range.size, root: this.range.root() })
    return note
  }

  /** The rows as `SELECT … ORDER BY seq, rowid` returns them. */
  scan(): StoredRecord[] {
    return this.rows
      .slice()
      .sort((a, b) => a.seq - b.seq || a.rowid - b.rowid)
      .map((r) => ({ ...r }))
  }

  row(seq: number): Row {
    const r = this.rows.find((x) => x.seq === seq)
    if (!r) throw new Error(`no row with seq ${seq}`)
    return r
  }

  /** Recomputes one row's digest from its (possibly edited) fields, as an attacker would. */
  rehash(seq: number): this {
    const r = this.row(seq)
    r.digest = this.hasher.digest(formatRecordId(r.seq), r.prevDigest, r.timestamp, r.userId, r.canonical)
    return this
  }

  /** Relinks and rehashes every row from `seq` on and points the head at the new tip (a consistent rewrite). */
  rewriteFrom(seq: number): this {
    const ordered = this.rows.slice().sort((a, b) => a.seq - b.seq)
    let prev: Buffer = seq === 1 ? this.hasher.genesis : this.row(seq - 1).digest
    for (const r of ordered) {
      if (r.seq < seq) continue
      r.prevDigest = prev
      r.recordId = formatRecordId(r.seq)
      r.digest = this.hasher.digest(r.recordId, r.prevDigest, r.timestamp, r.userId, r.canonical)
      prev = r.digest
    }
    this.fixHead()
    return this
  }

  /** DELETE FROM events WHERE seq = ? */
  delete(seq: number): this {
    this.rows = this.rows.filter((r) => r.seq !== seq)
    return this
  }

  /** Points the head row at the highest stored record (or removes it when none are left). */
  fixHead(): this {
    const last = this.rows.reduce<Row | null>((m, r) => (m === null || r.seq > m.seq ? r : m), null)
    this.head = last === null ? null : { seq: last.seq, digest: last.digest }
    return this
  }

  /** INSERT with constraints dropped. */
  insert(row: Omit<Row, 'rowid'>): Row {
    const r = { ...row, rowid: this.nextRowid++ }
    this.rows.push(r)
    return r
  }

  /** Builds a correctly hashed row for `seq` linking to `prev` (a forgery an attacker can compute). */
  forge(seq: number, prev: Buffer, details: JsonObject = { forged: true }): Omit<Row, 'rowid'> {
    const recordId = formatRecordId(seq)
    const canonical = canonicalRecordBody({
      ScopeKey: 'plant-7/line-1',
      actionType: 'update',
      details,
      entityId: 'FORGED',
      entityType: 'batch',
    })
    const timestamp = '2026-01-01T00:00:30.000Z'
    return {
      seq,
      recordId,
      prevDigest: prev,
      timestamp,
      userId: 'acc_mallory',
      canonical,
      digest: this.hasher.digest(recordId, prev, timestamp, 'acc_mallory', canonical),
    }
  }

  verify(options: VerifyOptions = {}): VerifyResult {
    let recordSeq: number | null = null
    if (options.recordId != null) recordSeq = Number(options.recordId)
    return verifyChainSync({
      container: this.container,
      origin: this.origin,
      head: this.head,
      records: this.scan(),
      storedCheckpoints: options.useStoredCheckpoints === false ? [] : this.storedCheckpoints,
      headsLog: this.headsLog,
      trustedCheckpoint: options.trustedCheckpoint ?? null,
      trustedKeys: options.trustedKeys ?? [this.signing.verifier],
      recordSeq,
      ...(options.forkWindow !== undefined ? { forkWindow: options.forkWindow } : {}),
      ...(options.requireCoverage !== undefined ? { requireCoverage: options.requireCoverage } : {}),
    })
  }

  /** verify() that must produce a verdict. */
  verdict(options: VerifyOptions = {}): VerifyVerdict & { code: string } {
    const r = this.verify(options)
    if (r.kind !== 'verdict') throw new Error(`expected a verdict, got ${r.kind}: ${r.message}`)
    return { ...r.verdict, code: r.facts.code }
  }
}

function toRow(r: StoredRecord, rowid: number): Row {
  return {
    rowid,
    seq: r.seq,
    recordId: r.recordId,
    prevDigest: Buffer.from(r.prevDigest),
    timestamp: r.timestamp,
    userId: r.userId,
    canonical: r.canonical,
    digest: Buffer.from(r.digest),
  }
}
