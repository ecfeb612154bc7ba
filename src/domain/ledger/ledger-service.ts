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
  signCheckpoint,
} from './checkpoint.js'
import { canonicalRecordBody, containerIdForScope, createRecordHasher, PLATFORM_CONTAINER_ID, type RecordHasher } from './digest.js'
import { buildExportHeader, createExportWriter, type ExportFormat, type ExportTrailer, exportSealText } from './export-format.js'
import { createGroupCommitQueue } from './group-commit.js'
import { LedgerContentionError, type LedgerSnapshot, type RecordFilter, type RecordPage, type StoredCheckpoint } from './ledger-store.js'
import type { ContainerRef, StoredRecord } from './ledger-types.js'
import { type CompactRange, consistencyProof, createCompactRange, inclusionProof, type NodeSource, treeRoot } from './merkle.js'
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

/** A problem with a proof request: a size or record the container does not have. */
export class LedgerRangeError extends Error {
  readonly notFound: boolean
  constructor(message: string, notFound: boolean) {
    super(message)
    this.name = 'LedgerRangeError'
    this.notFound = notFound
  }
}

/** The server-set userId of records the platform writes itself (heads log). */
export const SYSTEM_USER_ID = 'system'

/** Heads-log entries used as anchors in one verify at most (the newest, the rest spread out). */
const HEADS_ANCHORS = 64
/** Whole-chain verifies running at once per process; more wait their turn (rule 5: costly, not for polling). */
const MAX_CONCURRENT_VERIFIES = 2

type QueueEntry = { readonly kind: 'append'; readonly entry: AppendEntry } | { readonly kind: 'checkpoint' }

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

  /**
   * One flush: every container's batch, a checkpoint for each container that changed, and the heads
   * log's entries for those checkpoints (and the heads log's own checkpoint), in one transaction.
   * Containers are locked in key order and the heads log last, so two processes flushing at once
   * cannot deadlock each other.
   */
  async function commitGroups(
    tx: Stores,
    groups: ReadonlyMap<string, { readonly key: ContainerRef; readonly entries: readonly QueueEntry[] }>,
  ): Promise<Map<string, (StoredRecord | null)[]>> {
    const now = clock.now()
    const results = new Map<string, (StoredRecord | null)[]>()
    const headsEntries = new Map<string, HeadsLogEntry[]>()
    for (const k of [...groups.keys()].sort()) {
      const { key: container, entries } = groups.get(k)!
      const appends = entries.flatMap((e) => (e.kind === 'append' ? [e.entry] : []))
      const hasher = hasherFor(container)
      let root: Uint8Array | null = null
      const { result, checkpoint } = await tx.ledger.appendBatch(
        container,
        (head) => appendBatch(hasher, head.tip, head.range, appends, now),
        (res, before) => {
          const size = res.head.seq
          if (size === 0 || (res.records.length === 0 && size === before.checkpointSize)) return null
          root = res.range.root()
          return checkpointOf(container, size, root, now)
        },
      )
      let i = 0
      results.set(
        k,
        entries.map((e) => (e.kind === 'append' ? result.records[i++]! : null)),
      )
      if (checkpoint !== null && root !== null) {
        const list = headsEntries.get(container.workspaceId) ?? []
        list.push({ containerId: container.containerId, size: checkpoint.size, root })
        headsEntries.set(container.workspaceId, list)
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
      await tx.ledger.appendBatch(
        heads,
        (head) => appendBatch(hasher, head.tip, head.range, entries, now),
        (res) => checkpointOf(heads, res.head.seq, res.range.root(), now),
      )
    }
    return results
  }

  const stats = { flushes: 0, entries: 0, failedFlushes: 0, flushMs: 0 }
  const queue = createGroupCommitQueue<ContainerRef, QueueEntry, StoredRecord | null>({
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
          return await stores.transaction((tx) => commitGroups(tx, groups))
        } catch (error) {
          // A deadlock with a writer that locked in another order: the flush was rolled back whole.
          if (error instanceof LedgerContentionError && attempt < 4) continue
          throw error
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
    return Promise.all(prepared.map((entry) => queue.submit(container, { kind: 'append', entry }))) as Promise<StoredRecord[]>
  }

  /**
   * Appends inside the caller's transaction, so the records commit (or roll back) with the change
   * they describe. The container's checkpoint follows right after the commit, through the queue.
   */
  async function appendInTransaction(tx: Stores, container: ContainerRef, requests: readonly AppendRequest[]): Promise<StoredRecord[]> {
    const prepared = requests.map(prepare)
    const hasher = hasherFor(container)
    const { result } = await tx.ledger.appendBatch(container, (head) => appendBatch(hasher, head.tip, head.range, prepared, clock.now()))
    tx.afterCommit(() => {
      queue
        .submit(container, { kind: 'checkpoint' })
        .catch((error: unknown) => deps.onBackgroundError?.(error, `checkpoint of ${container.containerId} after a decision`))
    })
    return [...result.records]
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

  function sizeOfNote(note: string | null | undefined): number | null {
    if (typeof note !== 'string') return null
    const cut = note.indexOf('\n\n')
    if (cut < 0) return null
    try {
      return parseCheckpointBody(note.slice(0, cut + 1)).size
    } catch {
      return null
    }
  }

  /**
   * Whole-chain verify of one container on one read snapshot (spec 4.5 rules 2-5, design §8),
   * against the head row, the newest stored checkpoint (and any of the caller's checkpoint's size),
   * the heads log and the caller's checkpoint. `recordSeq` comes from parseRecordId.
   */
  async function verify(args: {
    readonly container: ContainerRef
    readonly recordSeq?: number | null
    readonly trustedCheckpoint?: string | null
  }): Promise<VerifyResult> {
    const { container } = args
    return gated(() =>
      stores.ledger.readSnapshot(async (snap) => {
        const head = await snap.head(container)
        const stored: StoredCheckpoint[] = []
        const latest = await snap.latestCheckpoint(container)
        if (latest) stored.push(latest)
        const trustedSize = sizeOfNote(args.trustedCheckpoint)
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
          headsLog,
          trustedCheckpoint: args.trustedCheckpoint ?? null,
          trustedKeys: signing.trustedKeys,
          recordSeq: args.recordSeq ?? null,
          records: snap.records(container),
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
          if (latest !== null && lastSeq > 0) {
            // The proof runs from the smaller size to the larger: it shows the exported records are a
            // prefix of the signed tree (or the signed tree a prefix of them).
            const proof = await withNodes(snap, container, (nodes) =>
              latest.size >= lastSeq ? consistencyProof(nodes, lastSeq, latest.size) : consistencyProof(nodes, latest.size, lastSeq),
            ).catch(() => null)
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
