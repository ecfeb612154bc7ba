/**
 * @module
 * The activity log's contract (spec 2.6, 2.7, 4.5, 4.7; design §8): the declared `LedgerService`
 * with what each operation guarantees, its deps, request and result types, its errors and the
 * container helpers. The implementation is cut along its one real seam: the append path
 * (ledger-writer.ts: group commit, checkpoints, the integrity check) and the read path
 * (ledger-reader.ts: queries, verify, proofs, exports on read snapshots); ledger-service.ts joins them.
 */

import type { KeyObject } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { Clock } from '../../shared/clock.js'
import { DomainError, IntegrityError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { AppendEntry } from './append-batch.js'
import { checkpointOrigin, HEADS_LOG_CONTAINER_ID } from './checkpoint.js'
import { containerIdForScope, createRecordHasher, PLATFORM_CONTAINER_ID, type RecordHasher } from './digest.js'
import type { ExportFormat } from './export-format.js'
import type { FlushInfo } from './group-commit.js'
import type { RecordFilter, RecordPage } from './ledger-store.js'
import type { ContainerRef, RecordBodyInput, StoredRecord } from './ledger-types.js'
import type { NoteSigner, NoteVerifierKey } from './signed-note.js'
import type { VerifyResult } from './verify-chain.js'

/** The checkpoint signing key, held outside the database (a 0600 file or the environment). */
export interface LedgerSigning {
  /** Key name `<logName>/activity-log`; its vkey is what auditors configure. */
  readonly signer: NoteSigner
  readonly key: KeyObject
  /** Prefix of every origin line: `<logName>/activity-log/<workspace>/<container>`. */
  readonly logName: string
  /** Verifier keys whose checkpoints count in verify: this key, plus earlier keys kept after a rotation. */
  readonly trustedKeys: readonly NoteVerifierKey[]
}

export interface LedgerServiceDeps {
  /** The records, heads, nodes and checkpoints (`ledger`), appended in a transaction. */
  readonly stores: Pick<Stores, 'ledger' | 'transaction'>
  readonly signing: LedgerSigning
  readonly clock: Clock
  /** Records per group-commit flush at most (default 2,000). */
  readonly maxBatch?: number
  /** Problems that have no caller to report to (a checkpoint after a decision's commit failed). */
  readonly onBackgroundError?: (error: unknown, what: string) => void
  /**
   * A chain whose head is not the newest checkpoint this server signed: appends to it are refused.
   * The service also appends an alarm record to the workspace's Platform-Config log; this is for
   * the server log.
   */
  readonly onIntegrityAlarm?: (message: string, container: ContainerRef) => void
  /** Every flush's size and duration. */
  readonly onFlush?: (info: FlushInfo) => void
}

/** What a caller asks to append; `userId` is the server's, from the token or the deciding account. */
export interface AppendRequest {
  readonly userId: string
  readonly body: RecordBodyInput<Readonly<Record<string, unknown>>>
}

/** A record with its body fields read back from the stored canonical text. */
export interface LedgerRecordView {
  readonly record: StoredRecord
  readonly ScopeKey: string | null
  readonly entityType: string | null
  readonly entityId: string | null
  readonly actionType: string | null
  readonly details: unknown
}

export interface CheckpointInfo {
  readonly container: ContainerRef
  readonly origin: string
  readonly size: number
  /** RFC 9162 root, 32 bytes. */
  readonly root: Uint8Array
  readonly issuedAt: number
  readonly note: string
}

export interface InclusionProofResult {
  readonly seq: number
  readonly treeSize: number
  readonly leafHash: Uint8Array
  readonly rootHash: Uint8Array
  readonly proof: readonly Uint8Array[]
  /** The stored checkpoint of exactly `treeSize`, when one exists. */
  readonly checkpoint: string | null
}

export interface ConsistencyProofResult {
  readonly fromSize: number
  readonly toSize: number
  readonly fromRoot: Uint8Array
  readonly toRoot: Uint8Array
  readonly proof: readonly Uint8Array[]
  readonly fromCheckpoint: string | null
  readonly toCheckpoint: string | null
}

export interface ExportRequest {
  readonly container: ContainerRef
  readonly scopeKey: string | null
  readonly format: ExportFormat
  /** Stored-form timestamps: [from, to). */
  readonly from?: string
  readonly to?: string
  /** What the caller asked for, written into the header (informative). */
  readonly filter?: Readonly<Record<string, string>>
}

/**
 * A problem with a proof request: a size or record the container does not have. A kind of the one
 * error catalogue: a record or size past the tip is not-found (404), a contradictory range is
 * invalid input (400).
 */
export class LedgerRangeError extends DomainError {
  readonly kind: 'not-found' | 'invalid-input'
  readonly notFound: boolean
  constructor(message: string, notFound: boolean) {
    super(message)
    this.notFound = notFound
    this.kind = notFound ? 'not-found' : 'invalid-input'
  }
}

/** What `verify` checks: a container, optionally one record of it and the caller's own checkpoint. */
export interface LedgerVerifyRequest {
  readonly container: ContainerRef
  /** From recordSeqOf (record-id.ts): callers hand a RecordID as sent to a ledger command. */
  readonly recordSeq?: number | null
  readonly trustedCheckpoint?: string | null
}

/** A streamed export: its media type and the file. */
export interface LedgerExportStream {
  readonly contentType: string
  readonly stream: Readable
}

/** The verifier key auditors configure (C2SP vkey) and what it signs. */
export interface LedgerPublicKey {
  readonly keyName: string
  readonly verifierKey: string
  /** The raw Ed25519 public key, base64. */
  readonly publicKey: string
  readonly logName: string
}

/** Group-commit counters since start. */
export interface LedgerStats {
  readonly flushes: number
  readonly entries: number
  readonly failedFlushes: number
  readonly flushMs: number
}

/**
 * The activity log by container: the tamper-evident chains of records (one per ScopeKey, the
 * Platform-Config log and the workspace heads log). The activity log of decisions and calls and the
 * CLI use it directly; the API and the portal go through the caller's commands
 * (ledger-commands.ts), which pick and check the container and parse the RecordID.
 */
export interface LedgerService {
  /** The checkpoint origin line of a container: `<logName>/activity-log/<workspace>/<container>`. */
  origin(container: ContainerRef): string
  /**
   * Appends records through group commit and resolves with them once their flush committed. Each
   * record MUST get its timestamp from the server's clock and its userId from the request (never
   * from the body, spec 2.6); every committed batch MUST carry a checkpoint signed in the same
   * transaction and a heads-log entry for it. Throws TypeError for a bad body or userId, and
   * ChainNotCoveredError (IntegrityError, 503) when the chain's head is not the newest checkpoint
   * this server signed: nothing is appended to a chain written around the server.
   */
  append(container: ContainerRef, requests: readonly AppendRequest[]): Promise<StoredRecord[]>
  /** Checks and canonicalises append requests (throws TypeError for a bad body) without queueing them. */
  prepareAppend(requests: readonly AppendRequest[]): readonly AppendEntry[]
  /**
   * Queues already prepared entries at once (synchronously) and resolves like `append`, so a
   * caller can queue an append and what must share its commit (the call's own record) in one turn.
   * Throws ChainNotCoveredError synchronously for a chain refused earlier.
   */
  submitPrepared(container: ContainerRef, prepared: readonly AppendEntry[]): Promise<StoredRecord[]>
  /**
   * Appends inside the caller's transaction `tx`: the records MUST commit or roll back with the
   * change they describe; the checkpoint is signed in `tx` too, and the heads log records it after
   * the commit. Throws like `append`.
   */
  appendInTransaction(tx: Stores, container: ContainerRef, requests: readonly AppendRequest[]): Promise<StoredRecord[]>
  /** A page of a container's records matching `filter`, with the total, read from one snapshot. */
  query(container: ContainerRef, filter: RecordFilter, page: RecordPage): Promise<{ records: LedgerRecordView[]; total: number }>
  /**
   * Whole-chain verify of one container on one read snapshot (spec 4.5 rules 2-5): MUST read every
   * record and recompute every digest, and check the head row, the newest stored checkpoint, the
   * heads log and the caller's checkpoint (which may be one of the heads log). At most two run at
   * once per process; more wait. Returns the verdict, or that `recordSeq` is past the tip.
   */
  verify(request: LedgerVerifyRequest): Promise<VerifyResult>
  /**
   * RFC 9162 inclusion proof of record `seq` in the tree of `treeSize` records (default: the newest
   * checkpoint's size, so it checks against a signed root). Throws LedgerRangeError: not-found past
   * the tip, invalid-input for a tree that does not include the record.
   */
  proveInclusion(container: ContainerRef, seq: number, treeSize?: number): Promise<InclusionProofResult>
  /** RFC 9162 consistency proof between two tree sizes (default `toSize`: the newest checkpoint's). Throws LedgerRangeError. */
  proveConsistency(container: ContainerRef, fromSize: number, toSize?: number): Promise<ConsistencyProofResult>
  /** The container's newest signed checkpoint, or null before its first record. */
  latestCheckpoint(container: ContainerRef): Promise<CheckpointInfo | null>
  /**
   * Streams an export (spec 4.5 `format=json|csv`): header, the records of the date range exactly
   * as stored, and a trailer with the newest checkpoint, a proof tying it to the last exported
   * record, the verifier key and a seal, all from one read snapshot. Rejects only before the first
   * byte; a later failure destroys the stream.
   */
  exportLog(request: ExportRequest): Promise<LedgerExportStream>
  publicKey(): LedgerPublicKey
  /** Verifier keys whose checkpoints count in verify (this key and earlier ones kept after a rotation). */
  trustedKeys(): readonly NoteVerifierKey[]
  /** The workspace's containers that hold records (platform, heads log, one per ScopeKey). */
  containers(workspaceId: string): Promise<ContainerRef[]>
  stats(): LedgerStats
  /** Waits for every queued append and checkpoint, then refuses new ones. */
  close(): Promise<void>
  /** Waits for every queued append and checkpoint. */
  drain(): Promise<void>
}

/** The server-set userId of records the platform writes itself (heads log). */
export const SYSTEM_USER_ID = 'system'

/** The entityType of the alarm records the service appends to the Platform-Config log. */
export const INTEGRITY_ALARM_ENTITY_TYPE = 'ledger-integrity-alarm'

/** A chain head that is not the newest checkpoint this server signed (issue 14 item 1). */
export class ChainNotCoveredError extends IntegrityError {
  readonly container: ContainerRef
  readonly detail: string
  constructor(container: ContainerRef, detail: string) {
    super(
      `the chain head of ${describeContainer(container)} is not covered by a signed checkpoint (${detail}), so nothing was appended to it: someone wrote the database around the server. Run a whole-chain verify (POST /oi-api/provenance/events/verify, or provenant verify) and restore the log from a backup`,
    )
    this.container = container
    this.detail = detail
  }
}

function describeContainer(c: ContainerRef): string {
  if (c.containerId === PLATFORM_CONTAINER_ID) return 'the Platform-Config log'
  if (c.containerId === HEADS_LOG_CONTAINER_ID) return 'the workspace heads log'
  return `the log of scope ${JSON.stringify(c.containerId.slice('scope:'.length))}`
}

export function scopeContainer(workspaceId: string, scopeKey: string): ContainerRef {
  return { workspaceId, containerId: containerIdForScope(scopeKey) }
}

export function platformContainer(workspaceId: string): ContainerRef {
  return { workspaceId, containerId: PLATFORM_CONTAINER_ID }
}

export function headsContainer(workspaceId: string): ContainerRef {
  return { workspaceId, containerId: HEADS_LOG_CONTAINER_ID }
}

/** The ScopeKey a container id names, or null for the platform's own containers. */
export function scopeKeyOf(containerId: string): string | null {
  return containerId.startsWith('scope:') ? containerId.slice('scope:'.length) : null
}

export function viewOf(record: StoredRecord): LedgerRecordView {
  let body: Record<string, unknown> = {}
  try {
    const parsed = JSON.parse(record.canonical) as unknown
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>
  } catch {
    // A body that no longer parses (tampered) is shown as empty; verify reports it.
  }
  const s = (v: unknown) => (typeof v === 'string' ? v : null)
  return {
    record,
    ScopeKey: s(body['ScopeKey']),
    entityType: s(body['entityType']),
    entityId: s(body['entityId']),
    actionType: s(body['actionType']),
    details: body['details'] ?? {},
  }
}

export const containerKey = (c: ContainerRef): string => `${c.workspaceId}\u0000${c.containerId}`

/** What the append and read paths share: a record hasher per container and the checkpoint origin. */
export interface LedgerContext {
  hasherFor(container: ContainerRef): RecordHasher
  origin(container: ContainerRef): string
}

export function createLedgerContext(signing: LedgerSigning): LedgerContext {
  const hashers = new Map<string, RecordHasher>()
  return {
    hasherFor(c) {
      const key = containerKey(c)
      let h = hashers.get(key)
      if (h === undefined) {
        if (hashers.size > 10_000) hashers.clear()
        h = createRecordHasher(c.workspaceId, c.containerId)
        hashers.set(key, h)
      }
      return h
    },
    origin: (c) => checkpointOrigin(signing.logName, c),
  }
}
