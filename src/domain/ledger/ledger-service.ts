/**
 * @module
 * The activity log as a service (spec 2.6, 2.7, 4.5, 4.7; design §8): appends through group commit
 * with a signed checkpoint per batch and a heads-log entry per checkpoint, appends inside a caller's
 * transaction (decisions that commit with their change), queries, whole-chain verify on one read
 * snapshot, streamed exports with the latest checkpoint, and RFC 9162 inclusion and consistency
 * proofs. The HTTP routes, the activity log of decisions and calls, and the CLI all go through here.
 */

import type { KeyObject } from 'node:crypto'
import { PassThrough, type Readable } from 'node:stream'
import type { Clock } from '../../shared/clock.js'
import { DomainError, IntegrityError, UnavailableError } from '../errors.js'
import type { Stores } from '../stores.js'
import { type AppendEntry, appendBatch } from './append-batch.js'
import {
  checkpointOrigin,
  HEADS_LOG_ACTION_TYPE,
  HEADS_LOG_CONTAINER_ID,
  HEADS_LOG_ENTITY_TYPE,
  type HeadsLogEntry,
  openCheckpoint,
  parseCheckpointBody,
  parseHeadsLogEntry,
  signCheckpoint,
} from './checkpoint.js'
import {
  canonicalRecordBody,
  containerIdForScope,
  createRecordHasher,
  digestsEqual,
  PLATFORM_CONTAINER_ID,
  type RecordHasher,
} from './digest.js'
import { buildExportHeader, createExportWriter, type ExportFormat, type ExportTrailer, exportSealText } from './export-format.js'
import { createGroupCommitQueue } from './group-commit.js'
import {
  type HeadState,
  LedgerContentionError,
  type LedgerSnapshot,
  type RecordFilter,
  type RecordPage,
  type StoredCheckpoint,
} from './ledger-store.js'
import type { ContainerRef, StoredRecord } from './ledger-types.js'
import {
  type CompactRange,
  consistencyProof,
  createCompactRange,
  EMPTY_ROOT,
  hashesEqual,
  inclusionProof,
  type NodeSource,
  treeRoot,
} from './merkle.js'
import { formatRecordId } from './record-id.js'
import { type NoteSigner, type NoteVerifierKey, signNote } from './signed-note.js'
import { type VerifyResult, verifyChain } from './verify-chain.js'

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
  readonly stores: Stores
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
  readonly onFlush?: (info: {
    readonly entries: number
    readonly containers: number
    readonly ms: number
    readonly error?: unknown
  }) => void
}

/** What a caller asks to append; `userId` is the server's, from the token or the deciding account. */
export interface AppendRequest {
  readonly userId: string
  readonly body: {
    readonly ScopeKey?: string | null
    readonly entityType?: string | null
    readonly entityId?: string | null
    readonly actionType?: string | null
    readonly details?: Readonly<Record<string, unknown>> | null
  }
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

/** The server-set userId of records the platform writes itself (heads log). */
export const SYSTEM_USER_ID = 'system'

/** Heads-log entries used as anchors in one verify at most (the newest, the rest spread out). */
const HEADS_ANCHORS = 64
/** Whole-chain verifies running at once per process; more wait their turn (rule 5: costly, not for polling). */
const MAX_CONCURRENT_VERIFIES = 2

/**
 * A record to append, or a checkpoint that a caller's transaction signed with its own append
 * (appendInTransaction) and that the heads log still has to record.
 */
type QueueEntry =
  | { readonly kind: 'append'; readonly entry: AppendEntry }
  | { readonly kind: 'heads'; readonly size: number; readonly root: Uint8Array }

/** The entityType of the alarm records the service appends to the Platform-Config log. */
export const INTEGRITY_ALARM_ENTITY_TYPE = 'ledger-integrity-alarm'
/** How long a refused chain is refused before the next append checks it again (after a repair). */
const QUARANTINE_MS = 30_000

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

const containerKey = (c: ContainerRef): string => `${c.workspaceId}\u0000${c.containerId}`

export type LedgerService = ReturnType<typeof createLedgerService>

export function createLedgerService(deps: LedgerServiceDeps) {
  const { stores, signing, clock } = deps
  const hashers = new Map<string, RecordHasher>()

  function hasherFor(c: ContainerRef): RecordHasher {
    const key = containerKey(c)
    let h = hashers.get(key)
    if (h === undefined) {
      if (hashers.size > 10_000) hashers.clear()
      h = createRecordHasher(c.workspaceId, c.containerId)
      hashers.set(key, h)
    }
    return h
  }

  const origin = (c: ContainerRef): string => checkpointOrigin(signing.logName, c)

  /** A signed checkpoint of `size` with `root` (stored by the adapter in the append's transaction). */
  function checkpointOf(c: ContainerRef, size: number, root: Uint8Array, now: number): StoredCheckpoint {
    return {
      size,
      issuedAt: now,
      note: signCheckpoint({ origin: origin(c), size, root }, signing.signer, signing.key, Math.floor(now / 1000)),
    }
  }

  // --- the append path's integrity check (issue 14 item 1) ---------------------------------------

  /** The newest note this process signed or verified per container, so the check costs a string compare. */
  const knownNotes = new Map<string, { readonly note: string; readonly size: number; readonly root: Uint8Array }>()
  function remember(c: ContainerRef, checkpoint: StoredCheckpoint, root: Uint8Array): void {
    if (knownNotes.size > 10_000) knownNotes.clear()
    knownNotes.set(containerKey(c), { note: checkpoint.note, size: checkpoint.size, root })
  }

  /**
   * Refuses (throws ChainNotCoveredError) unless the stored head is exactly the newest checkpoint
   * this server signed for the container: same size, same Merkle root, a valid signature by a key
   * it trusts, and no stored record past it. Every committed batch is signed in its own transaction,
   * so anything else means the store was written around the server; extending and signing it would
   * vouch for records the server never wrote. Runs under the container's lock, before anything is built.
   */
  function assertHeadCovered(c: ContainerRef, head: HeadState): void {
    const size = head.existed ? head.tip.seq : 0
    const tip = head.storedTip ?? null
    if (tip !== null && (tip.seq !== size || (size > 0 && !digestsEqual(tip.digest, head.tip.digest))))
      throw new ChainNotCoveredError(
        c,
        tip.seq !== size
          ? `the stored records end at ${formatRecordId(tip.seq)} but the head row says ${size === 0 ? 'empty' : formatRecordId(size)}`
          : `the record at ${formatRecordId(size)} is not the one the head row names`,
      )
    const note = head.newestCheckpointNote ?? null
    if (note === null) {
      if (size === 0 && tip === null) return // a new container
      throw new ChainNotCoveredError(c, `no signed checkpoint is stored for its ${size} records`)
    }
    let signed = knownNotes.get(containerKey(c))
    if (signed === undefined || signed.note !== note) {
      try {
        const cp = openCheckpoint(note, signing.trustedKeys, origin(c))
        signed = { note, size: cp.size, root: cp.root }
      } catch (error) {
        const message = (error as Error).message
        // A deployment whose processes do not share the signing key looks exactly like this.
        const hint = /unknown keys/.test(message)
          ? ' (if another process of this deployment signed it, every process must use the same activity-log signing key: docs/deployment.md)'
          : ''
        throw new ChainNotCoveredError(c, `its newest stored checkpoint does not verify: ${message}${hint}`)
      }
    }
    if (signed.size !== size)
      throw new ChainNotCoveredError(
        c,
        `the head is at ${size === 0 ? 'empty' : formatRecordId(size)} but the newest checkpoint this server signed has size ${signed.size}`,
      )
    if (!hashesEqual(size === 0 ? EMPTY_ROOT : head.range.root(), signed.root))
      throw new ChainNotCoveredError(c, `the head's Merkle root differs from the one signed at size ${size}`)
    knownNotes.set(containerKey(c), signed)
  }

  /** Refused chains, until when (ms, process clock): appends to them fail at once, before queueing. */
  const quarantined = new Map<string, number>()
  function quarantineOf(c: ContainerRef): ChainNotCoveredError | null {
    for (const k of [containerKey(c), containerKey(headsContainer(c.workspaceId))]) {
      const until = quarantined.get(k)
      if (until === undefined) continue
      if (performance.now() < until) {
        const [workspaceId, containerId] = k.split('\u0000') as [string, string]
        return new ChainNotCoveredError({ workspaceId, containerId }, 'refused earlier; checked again shortly')
      }
      quarantined.delete(k)
    }
    return null
  }

  /** Logs a refusal, quarantines the chain and appends an alarm record to the Platform-Config log. */
  function raiseAlarm(error: ChainNotCoveredError): void {
    const c = error.container
    const key = containerKey(c)
    const first = !quarantined.has(key)
    quarantined.set(key, performance.now() + QUARANTINE_MS)
    if (!first) return
    deps.onIntegrityAlarm?.(`activity log: append to ${c.containerId} refused: ${error.message}`, c)
    // The alarm cannot go into the chain that failed, nor past a heads log that failed.
    if (c.containerId === PLATFORM_CONTAINER_ID || c.containerId === HEADS_LOG_CONTAINER_ID) return
    queue
      .submit(platformContainer(c.workspaceId), {
        kind: 'append',
        entry: prepare({
          userId: SYSTEM_USER_ID,
          body: {
            ScopeKey: null,
            entityType: INTEGRITY_ALARM_ENTITY_TYPE,
            entityId: c.containerId,
            actionType: 'append-refused',
            details: { reason: error.detail, message: error.message },
          },
        }),
      })
      .catch((e: unknown) => deps.onBackgroundError?.(e, `the integrity alarm for ${c.containerId}`))
  }

  /**
   * One flush: every container's batch with its signed checkpoint, and the heads log's entries for
   * those checkpoints (and the heads log's own checkpoint), in one transaction. Containers are
   * locked in key order and the heads log last, so two processes flushing at once cannot deadlock
   * each other. Each chain is checked before it is extended (assertHeadCovered); a refusal rolls the
   * whole flush back.
   */
  async function commitGroups(
    tx: Stores,
    groups: ReadonlyMap<string, { readonly key: ContainerRef; readonly entries: readonly QueueEntry[] }>,
  ): Promise<{ results: Map<string, (StoredRecord | null)[]>; signed: [ContainerRef, StoredCheckpoint, Uint8Array][] }> {
    const now = clock.now()
    const results = new Map<string, (StoredRecord | null)[]>()
    const headsEntries = new Map<string, HeadsLogEntry[]>()
    const signed: [ContainerRef, StoredCheckpoint, Uint8Array][] = []
    const addHeads = (c: ContainerRef, size: number, root: Uint8Array) => {
      const list = headsEntries.get(c.workspaceId) ?? []
      list.push({ containerId: c.containerId, size, root })
      headsEntries.set(c.workspaceId, list)
    }
    for (const k of [...groups.keys()].sort()) {
      const { key: container, entries } = groups.get(k)!
      const appends = entries.flatMap((e) => (e.kind === 'append' ? [e.entry] : []))
      // Checkpoints a caller's transaction signed: only the heads log still has to record them.
      for (const e of entries) if (e.kind === 'heads') addHeads(container, e.size, e.root)
      if (appends.length === 0) {
        results.set(
          k,
          entries.map(() => null),
        )
        continue
      }
      const hasher = hasherFor(container)
      let root: Uint8Array | null = null
      const { result, checkpoint } = await tx.ledger.appendBatch(
        container,
        (head) => {
          assertHeadCovered(container, head)
          return appendBatch(hasher, head.tip, head.range, appends, now)
        },
        (res) => {
          root = res.range.root()
          return checkpointOf(container, res.head.seq, root, now)
        },
      )
      let i = 0
      results.set(
        k,
        entries.map((e) => (e.kind === 'append' ? result.records[i++]! : null)),
      )
      if (checkpoint !== null && root !== null) {
        signed.push([container, checkpoint, root])
        addHeads(container, checkpoint.size, root)
      }
    }
    for (const workspaceId of [...headsEntries.keys()].sort()) {
      const heads = headsContainer(workspaceId)
      const entries: AppendEntry[] = headsEntries.get(workspaceId)!.map((e) => ({
        userId: SYSTEM_USER_ID,
        body: {
          ScopeKey: null,
          entityType: HEADS_LOG_ENTITY_TYPE,
          entityId: e.containerId,
          actionType: HEADS_LOG_ACTION_TYPE,
          details: { size: e.size, root: Buffer.from(e.root).toString('base64') },
        },
      }))
      const hasher = hasherFor(heads)
      let root: Uint8Array | null = null
      const { checkpoint } = await tx.ledger.appendBatch(
        heads,
        (head) => {
          assertHeadCovered(heads, head)
          return appendBatch(hasher, head.tip, head.range, entries, now)
        },
        (res) => {
          root = res.range.root()
          return checkpointOf(heads, res.head.seq, root, now)
        },
      )
      if (checkpoint !== null && root !== null) signed.push([heads, checkpoint, root])
    }
    return { results, signed }
  }

  const stats = { flushes: 0, entries: 0, failedFlushes: 0, flushMs: 0 }
  type QueueResult = StoredRecord | null | Error
  const queue = createGroupCommitQueue<ContainerRef, QueueEntry, QueueResult>({
    keyOf: containerKey,
    ...(deps.maxBatch !== undefined ? { maxBatch: deps.maxBatch } : {}),
    onFlush: (info) => {
      stats.flushes++
      stats.entries += info.entries
      stats.flushMs += info.ms
      if (info.error !== undefined) stats.failedFlushes++
      deps.onFlush?.(info)
    },
    async commit(groups) {
      for (let attempt = 1; ; attempt++) {
        try {
          const { results, signed } = await stores.transaction((tx) => commitGroups(tx, groups))
          for (const [c, cp, root] of signed) remember(c, cp, root)
          return results
        } catch (error) {
          // A deadlock with a writer that locked in another order: the flush was rolled back whole.
          if (error instanceof LedgerContentionError && attempt < 4) continue
          if (!(error instanceof ChainNotCoveredError)) throw error
          // A chain failed its check: the flush was rolled back. Its entries get the refusal; the
          // others (which may belong with them, like a call's own record) are failed as retryable,
          // and the chain is refused before queueing from now on (quarantine).
          raiseAlarm(error)
          const refused = error.container.containerId === HEADS_LOG_CONTAINER_ID ? null : containerKey(error.container)
          const retry = new UnavailableError(
            'the activity log could not commit this batch because another chain in it failed its integrity check; retry',
          )
          const out = new Map<string, QueueResult[]>()
          for (const [k, g] of groups) {
            const mine = refused === null ? g.key.workspaceId === error.container.workspaceId : k === refused
            out.set(
              k,
              g.entries.map(() => (mine ? error : retry)),
            )
          }
          return out
        }
      }
    },
  })

  /** Canonical text now, so a bad body fails its own request and never a shared flush. */
  function prepare(request: AppendRequest): AppendEntry {
    if (typeof request.userId !== 'string' || request.userId.length === 0) throw new TypeError('userId must be a non-empty string')
    return { userId: request.userId, canonical: canonicalRecordBody(request.body as Parameters<typeof canonicalRecordBody>[0]) }
  }

  /** Appends through group commit; resolves with the stored records once their flush committed. */
  async function append(container: ContainerRef, requests: readonly AppendRequest[]): Promise<StoredRecord[]> {
    return submit(container, requests.map(prepare))
  }

  /**
   * Queues already prepared entries at once (synchronously) and resolves like `append`. With
   * `prepareAppend`, this lets a caller refuse a bad body first and then queue the append and
   * something that must share its commit (the call's own record) in the same turn.
   */
  function submit(container: ContainerRef, prepared: readonly AppendEntry[]): Promise<StoredRecord[]> {
    // A refused chain fails at once (synchronously), so a caller fails before it queues anything
    // that belongs with the append (the call's own record).
    const refused = quarantineOf(container)
    if (refused !== null) throw refused
    return Promise.all(
      prepared.map((entry) =>
        queue.submit(container, { kind: 'append', entry }).then((r) => {
          if (r instanceof Error) throw r
          return r as StoredRecord
        }),
      ),
    )
  }

  /**
   * Appends inside the caller's transaction, so the records commit (or roll back) with the change
   * they describe. The container's checkpoint follows right after the commit, through the queue.
   */
  async function appendInTransaction(tx: Stores, container: ContainerRef, requests: readonly AppendRequest[]): Promise<StoredRecord[]> {
    const prepared = requests.map(prepare)
    const refused = quarantineOf(container)
    if (refused !== null) throw refused
    const hasher = hasherFor(container)
    const now = clock.now()
    let root: Uint8Array | null = null
    let result: Awaited<ReturnType<Stores['ledger']['appendBatch']>>
    try {
      result = await tx.ledger.appendBatch(
        container,
        (head) => {
          assertHeadCovered(container, head)
          return appendBatch(hasher, head.tip, head.range, prepared, now)
        },
        // Signed in the caller's transaction: it commits (or rolls back) with the records it covers.
        (res) => {
          root = res.range.root()
          return checkpointOf(container, res.head.seq, root, now)
        },
      )
    } catch (error) {
      if (error instanceof ChainNotCoveredError) raiseAlarm(error)
      throw error
    }
    const { checkpoint } = result
    tx.afterCommit(() => {
      if (checkpoint === null || root === null) return
      remember(container, checkpoint, root)
      // The heads log records it in the next flush (its lock is only ever taken last, by a flush).
      queue
        .submit(container, { kind: 'heads', size: checkpoint.size, root })
        .catch((error: unknown) => deps.onBackgroundError?.(error, `the heads-log entry of ${container.containerId} after a decision`))
    })
    return [...result.result.records]
  }

  async function query(
    container: ContainerRef,
    filter: RecordFilter,
    page: RecordPage,
  ): Promise<{ records: LedgerRecordView[]; total: number }> {
    const { records, total } = await stores.ledger.readSnapshot((snap) => snap.query(container, filter, page))
    return { records: records.map(viewOf), total }
  }

  // --- verify ------------------------------------------------------------------------------------

  let verifying = 0
  const verifyWaiters: (() => void)[] = []
  async function gated<T>(fn: () => Promise<T>): Promise<T> {
    while (verifying >= MAX_CONCURRENT_VERIFIES) await new Promise<void>((resolve) => verifyWaiters.push(resolve))
    verifying++
    try {
      return await fn()
    } finally {
      verifying--
      verifyWaiters.shift()?.()
    }
  }

  function bodyOfNote(note: string | null | undefined): { origin: string; size: number } | null {
    if (typeof note !== 'string') return null
    const cut = note.indexOf('\n\n')
    if (cut < 0) return null
    try {
      return parseCheckpointBody(note.slice(0, cut + 1))
    } catch {
      return null
    }
  }

  /** The records of a container, with a look at each one as it goes by. */
  async function* tapped(records: AsyncIterable<StoredRecord>, look: (r: StoredRecord) => void): AsyncIterable<StoredRecord> {
    for await (const r of records) {
      look(r)
      yield r
    }
  }

  /**
   * Whole-chain verify of one container on one read snapshot (spec 4.5 rules 2-5, design §8),
   * against the head row, the newest stored checkpoint (and any of the caller's checkpoint's size),
   * the heads log and the caller's checkpoint. `recordSeq` comes from recordSeqOf (ledger-commands.ts).
   *
   * The caller's checkpoint may also be one of the workspace heads log (issue 14 item 3). Then the
   * heads log itself is verified against it first: if it holds, its newest entry for this container
   * (within the kept size) is an anchor, so a container deleted with its head row is TRUNCATED, not
   * Empty; if it does not, the verdict fails with HEADS_LOG_MISMATCH (the record of which containers
   * existed was rewritten).
   */
  async function verify(args: {
    readonly container: ContainerRef
    /** From recordSeqOf (record-id.ts): callers hand a RecordID as sent to a ledger command. */
    readonly recordSeq?: number | null
    readonly trustedCheckpoint?: string | null
  }): Promise<VerifyResult> {
    const { container } = args
    const heads = headsContainer(container.workspaceId)
    const trusted = bodyOfNote(args.trustedCheckpoint)
    const headsCheckpoint =
      container.containerId !== HEADS_LOG_CONTAINER_ID && trusted !== null && trusted.origin === origin(heads)
        ? args.trustedCheckpoint!
        : null
    return gated(() =>
      stores.ledger.readSnapshot(async (snap) => {
        let externalFinding: Parameters<typeof verifyChain>[0]['externalFinding']
        const kept: HeadsLogEntry[] = []
        if (headsCheckpoint !== null) {
          let newest: HeadsLogEntry | null = null
          const keptSize = trusted!.size
          const headsResult = await verifyChain({
            container: heads,
            origin: origin(heads),
            head: await snap.head(heads),
            storedCheckpoints: [
              ...(await snap.checkpointsOfSize(heads, [keptSize])),
              ...[await snap.latestCheckpoint(heads)].flatMap((c) => (c ? [c] : [])),
            ].map((c) => c.note),
            trustedCheckpoint: headsCheckpoint,
            trustedKeys: signing.trustedKeys,
            requireCoverage: true,
            records: tapped(snap.records(heads), (r) => {
              if (r.seq > keptSize) return
              const e = parseHeadsLogEntry(r.canonical)
              if (e !== null && e.containerId === container.containerId && (newest === null || e.size >= newest.size)) newest = e
            }),
          })
          if (headsResult.kind !== 'verdict') return headsResult
          if (!headsResult.verdict.ChainValid)
            externalFinding = {
              seq: 1,
              code: 'HEADS_LOG_MISMATCH',
              message: `the workspace heads log does not match the heads-log checkpoint you kept (size ${keptSize}), so which containers existed and how large they were was rewritten: ${headsResult.verdict.Reason}`,
              fork: headsResult.verdict.ForkDetected,
            }
          else if (newest !== null) kept.push(newest)
        }
        const head = await snap.head(container)
        const stored: StoredCheckpoint[] = []
        const latest = await snap.latestCheckpoint(container)
        if (latest) stored.push(latest)
        const ownCheckpoint = headsCheckpoint === null ? (args.trustedCheckpoint ?? null) : null
        const trustedSize = ownCheckpoint === null ? null : (trusted?.size ?? null)
        if (trustedSize !== null && trustedSize !== latest?.size) stored.push(...(await snap.checkpointsOfSize(container, [trustedSize])))
        const headsLog =
          container.containerId === HEADS_LOG_CONTAINER_ID
            ? []
            : await snap.headsLog(container.workspaceId, container.containerId, HEADS_ANCHORS)
        return verifyChain({
          container,
          origin: origin(container),
          head,
          storedCheckpoints: stored.map((c) => c.note),
          headsLog: [...headsLog, ...kept],
          trustedCheckpoint: ownCheckpoint,
          trustedKeys: signing.trustedKeys,
          recordSeq: args.recordSeq ?? null,
          records: snap.records(container),
          requireCoverage: true,
          ...(externalFinding !== undefined ? { externalFinding } : {}),
        })
      }),
    )
  }

  // --- proofs ------------------------------------------------------------------------------------

  /** Runs a Merkle computation over stored nodes: a dry run finds the nodes it needs, one read fetches them. */
  async function withNodes<T>(snap: LedgerSnapshot, c: ContainerRef, fn: (nodes: NodeSource) => T): Promise<T> {
    const wanted = new Map<string, { level: number; index: number }>()
    const zero = new Uint8Array(32)
    fn({
      node: (level, index) => {
        wanted.set(`${level}/${index}`, { level, index })
        return zero
      },
    })
    let got: Map<string, Uint8Array>
    try {
      got = await snap.nodes(c, [...wanted.values()])
    } catch (error) {
      throw new LedgerRangeError(`the store cannot produce this proof: ${(error as Error).message}; run a whole-chain verify`, true)
    }
    return fn({ node: (level, index) => got.get(`${level}/${index}`)! })
  }

  /** The compact range of the first `size` records, from stored nodes. */
  async function rangeAt(snap: LedgerSnapshot, c: ContainerRef, size: number): Promise<CompactRange> {
    return withNodes(snap, c, (nodes) => {
      const peaks: Uint8Array[] = []
      let start = 0
      for (let level = 52; level >= 0; level--) {
        const width = 2 ** level
        if (Math.floor(size / width) % 2 === 1) {
          peaks.push(nodes.node(level, start / width))
          start += width
        }
      }
      return createCompactRange(size, peaks)
    })
  }

  async function tipSize(snap: LedgerSnapshot, c: ContainerRef): Promise<number> {
    return (await snap.head(c))?.seq ?? 0
  }

  function noteRoot(note: string): Uint8Array | null {
    try {
      return openCheckpoint(note, signing.trustedKeys).root
    } catch {
      return null
    }
  }

  async function checkpointAt(snap: LedgerSnapshot, c: ContainerRef, size: number): Promise<string | null> {
    const list = await snap.checkpointsOfSize(c, [size])
    return list.at(-1)?.note ?? null
  }

  /**
   * RFC 9162 inclusion proof of record `seq` in the tree of `treeSize` records (default: the newest
   * checkpoint's size, so the proof checks against a signed root).
   */
  async function proveInclusion(c: ContainerRef, seq: number, treeSize?: number): Promise<InclusionProofResult> {
    return stores.ledger.readSnapshot(async (snap) => {
      const tip = await tipSize(snap, c)
      const latest = await snap.latestCheckpoint(c)
      if (seq > tip)
        throw new LedgerRangeError(
          tip === 0
            ? `RecordID ${formatRecordId(seq)} does not exist: the container is empty`
            : `RecordID ${formatRecordId(seq)} does not exist: the chain ends at ${formatRecordId(tip)}`,
          true,
        )
      const size = treeSize ?? (latest !== null && latest.size >= seq && latest.size <= tip ? latest.size : tip)
      if (size > tip) throw new LedgerRangeError(`treeSize ${size} is larger than the container (${tip} records)`, false)
      if (size < seq)
        throw new LedgerRangeError(`treeSize ${size} does not include RecordID ${formatRecordId(seq)}; it must be at least ${seq}`, false)
      const { proof, root, leaf } = await withNodes(snap, c, (nodes) => ({
        proof: inclusionProof(nodes, seq - 1, size),
        root: treeRoot(nodes, size),
        leaf: nodes.node(0, seq - 1),
      }))
      return { seq, treeSize: size, leafHash: leaf, rootHash: root, proof, checkpoint: await checkpointAt(snap, c, size) }
    })
  }

  /** RFC 9162 consistency proof between the trees of `fromSize` and `toSize` (default: newest checkpoint). */
  async function proveConsistency(c: ContainerRef, fromSize: number, toSize?: number): Promise<ConsistencyProofResult> {
    return stores.ledger.readSnapshot(async (snap) => {
      const tip = await tipSize(snap, c)
      const latest = await snap.latestCheckpoint(c)
      const to = toSize ?? (latest !== null && latest.size <= tip ? latest.size : tip)
      if (to > tip) throw new LedgerRangeError(`size ${to} is larger than the container (${tip} records)`, false)
      if (fromSize > to) throw new LedgerRangeError(`from (${fromSize}) must not be larger than to (${to})`, false)
      const r = await withNodes(snap, c, (nodes) => ({
        proof: consistencyProof(nodes, fromSize, to),
        fromRoot: treeRoot(nodes, fromSize),
        toRoot: treeRoot(nodes, to),
      }))
      return {
        fromSize,
        toSize: to,
        ...r,
        fromCheckpoint: fromSize === 0 ? null : await checkpointAt(snap, c, fromSize),
        toCheckpoint: to === 0 ? null : await checkpointAt(snap, c, to),
      }
    })
  }

  async function latestCheckpoint(c: ContainerRef): Promise<CheckpointInfo | null> {
    const cp = await stores.ledger.readSnapshot((snap) => snap.latestCheckpoint(c))
    if (cp === null) return null
    const root = noteRoot(cp.note) ?? parseCheckpointBody(cp.note.slice(0, cp.note.indexOf('\n\n') + 1)).root
    return { container: c, origin: origin(c), size: cp.size, root, issuedAt: cp.issuedAt, note: cp.note }
  }

  // --- export ------------------------------------------------------------------------------------

  /**
   * Streams an export (spec 4.5 `format=json|csv`): header, the records of the date range exactly
   * as stored, and a trailer with the container's newest checkpoint (plus an RFC 9162 proof tying
   * it to the last exported record), the verifier key and the seal. Everything comes from one read
   * snapshot, held while the client reads; nothing is buffered beyond the stream's high-water mark.
   */
  function exportLog(req: ExportRequest): Promise<{ readonly contentType: string; readonly stream: Readable }> {
    const { container } = req
    const writer = createExportWriter(req.format)
    return new Promise((resolve, reject) => {
      const out = new PassThrough()
      let started = false
      const write = async (chunk: string): Promise<boolean> => {
        if (out.destroyed) return false
        if (out.write(chunk)) return true
        await new Promise<void>((done) => {
          const finish = () => {
            out.off('drain', finish)
            out.off('close', finish)
            done()
          }
          out.once('drain', finish)
          out.once('close', finish)
        })
        return !out.destroyed
      }
      stores.ledger
        .readSnapshot(async (snap) => {
          const dated = req.from !== undefined || req.to !== undefined
          const range = await snap.seqRange(container, req.from, req.to)
          const hasher = hasherFor(container)
          let first: StoredRecord | null = null
          let last: StoredRecord | null = null
          if (range !== null) {
            const firstSeq = dated ? range.first : 1
            for await (const r of snap.records(container, firstSeq, firstSeq)) {
              first = r
              break
            }
            for await (const r of snap.records(container, range.last, range.last)) {
              last = r
              break
            }
            // A full export starts at 000000000001 even when that record is gone (verify then says so).
            if (first === null)
              first = {
                seq: firstSeq,
                recordId: formatRecordId(firstSeq),
                prevDigest: firstSeq === 1 ? hasher.genesis : new Uint8Array(32),
                timestamp: '',
                userId: '',
                canonical: '',
                digest: new Uint8Array(32),
              }
          }
          const firstSeq = first?.seq ?? 1
          let prefix: CompactRange | null = null
          if (first !== null && firstSeq > 1) prefix = await rangeAt(snap, container, firstSeq - 1).catch(() => null)
          const headerObject = buildExportHeader({
            container,
            scopeKey: req.scopeKey,
            origin: origin(container),
            genesis: hasher.genesis,
            exportedAt: new Date(clock.now()).toISOString(),
            filter: { ...(req.filter ?? {}) },
            first,
            last,
            prefix,
          })
          const checkpoints: { note: string; consistencyProof: string[] }[] = []
          const latest = await snap.latestCheckpoint(container)
          const lastSeq = last?.seq ?? 0
          let proofProblem: string | undefined
          if (latest !== null && lastSeq > 0) {
            // The proof runs from the smaller size to the larger: it shows the exported records are a
            // prefix of the signed tree (or the signed tree a prefix of them).
            const proof = await withNodes(snap, container, (nodes) =>
              latest.size >= lastSeq ? consistencyProof(nodes, lastSeq, latest.size) : consistencyProof(nodes, latest.size, lastSeq),
            ).catch((error: unknown) => {
              proofProblem = `no consistency proof between the newest checkpoint (size ${latest.size}) and the last exported record (${formatRecordId(lastSeq)}) could be built: ${(error as Error).message}`
              return null
            })
            if (proof !== null) checkpoints.push({ note: latest.note, consistencyProof: proof.map((h) => Buffer.from(h).toString('hex')) })
          }
          started = true
          resolve({ contentType: writer.contentType, stream: out })
          if (!(await write(writer.header(headerObject)))) return
          let count = 0
          if (range !== null && first !== null) {
            for await (const r of snap.records(container, firstSeq, lastSeq)) {
              count++
              if (!(await write(writer.record(r)))) return
            }
          }
          const unsealed: ExportTrailer = {
            recordCount: count,
            checkpoints,
            verifierKeys: [signing.signer.vkey],
            latestCheckpoint: latest?.note ?? null,
            ...(proofProblem !== undefined ? { proofProblem } : {}),
          }
          const trailer: ExportTrailer = { ...unsealed, seal: signNote(exportSealText(headerObject, unsealed, count), [signing.signer]) }
          if (!(await write(writer.trailer(trailer)))) return
          out.end()
        })
        .catch((error: unknown) => {
          if (!started) reject(error)
          else out.destroy(error as Error)
        })
    })
  }

  return {
    origin,
    append,
    /** Checks and canonicalises append requests (throws for a bad body) without queueing them. */
    prepareAppend: (requests: readonly AppendRequest[]): readonly AppendEntry[] => requests.map(prepare),
    submitPrepared: submit,
    appendInTransaction,
    query,
    verify,
    proveInclusion,
    proveConsistency,
    latestCheckpoint,
    exportLog,
    /** The verifier key auditors configure (C2SP vkey) and what it signs. */
    publicKey: () => ({
      keyName: signing.signer.name,
      verifierKey: signing.signer.vkey,
      publicKey: Buffer.from(signing.signer.publicKey).toString('base64'),
      logName: signing.logName,
    }),
    trustedKeys: () => signing.trustedKeys,
    /** The workspace's containers that hold records (platform, heads log, one per ScopeKey). */
    containers: (workspaceId: string) => stores.ledger.containers(workspaceId),
    /** Group-commit counters since start: flushes, entries they carried, failures, time in flushes. */
    stats: () => ({ ...stats }),
    /** Waits for every queued append and checkpoint, then refuses new ones. */
    close: () => queue.close(),
    drain: () => queue.drain(),
  }
}
