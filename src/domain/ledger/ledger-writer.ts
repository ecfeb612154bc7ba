/**
 * @module
 * The activity log's append path (ledger-contract.ts has the contract): group commit with a signed
 * checkpoint per batch and a heads-log entry per checkpoint, appends inside a caller's transaction,
 * and the integrity check that refuses to extend a chain written around the server (issue 14 item 1).
 */

import { UnavailableError } from '../errors.js'
import type { Stores } from '../stores.js'
import { type AppendEntry, appendBatch } from './append-batch.js'
import {
  HEADS_LOG_ACTION_TYPE,
  HEADS_LOG_CONTAINER_ID,
  HEADS_LOG_ENTITY_TYPE,
  type HeadsLogEntry,
  openCheckpoint,
  signCheckpoint,
} from './checkpoint.js'
import { canonicalRecordBody, digestsEqual, PLATFORM_CONTAINER_ID } from './digest.js'
import { createGroupCommitQueue } from './group-commit.js'
import {
  type AppendRequest,
  ChainNotCoveredError,
  containerKey,
  headsContainer,
  INTEGRITY_ALARM_ENTITY_TYPE,
  type LedgerContext,
  type LedgerService,
  type LedgerServiceDeps,
  platformContainer,
  SYSTEM_USER_ID,
} from './ledger-contract.js'
import { type HeadState, LedgerContentionError, type StoredCheckpoint } from './ledger-store.js'
import type { ContainerRef, RecordBodyInput, StoredRecord } from './ledger-types.js'
import { EMPTY_ROOT, hashesEqual } from './merkle.js'
import { formatRecordId } from './record-id.js'

/**
 * A record to append, or a checkpoint that a caller's transaction signed with its own append
 * (appendInTransaction) and that the heads log still has to record.
 */
type QueueEntry =
  | { readonly kind: 'append'; readonly entry: AppendEntry }
  | { readonly kind: 'heads'; readonly size: number; readonly root: Uint8Array }

/** How long a refused chain is refused before the next append checks it again (after a repair). */
const QUARANTINE_MS = 30_000

export type LedgerWriter = Pick<
  LedgerService,
  'append' | 'prepareAppend' | 'submitPrepared' | 'appendInTransaction' | 'stats' | 'close' | 'drain'
>

export function createLedgerWriter(deps: LedgerServiceDeps, context: LedgerContext): LedgerWriter {
  const { stores, signing, clock } = deps
  const { hasherFor, origin } = context

  /** A signed checkpoint of `size` with `root` (stored by the adapter in the append's transaction). */
  function checkpointOf(c: ContainerRef, size: number, root: Uint8Array, now: number): StoredCheckpoint {
    return {
      size,
      issuedAt: now,
      note: signCheckpoint({ origin: origin(c), size, root }, signing.signer, signing.key, Math.floor(now / 1000)),
    }
  }

  // --- the append path's integrity check (issue 14 item 1) ---------------------------------------

  /**
   * The newest note this process signed or verified per container, so the check costs a string
   * compare. A note is remembered when it is signed, before its transaction commits: the next
   * writer of the container may take the database's lock before this one's commit callbacks run,
   * and a note this process signed needs no signature check. A rolled-back note is never the stored
   * head, so it only costs one verification of the head that is stored.
   */
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
   * Appends `entries` to a container in `tx` once its head passed the integrity check
   * (assertHeadCovered), with a checkpoint of the new head signed in the same transaction, so it
   * commits or rolls back with the records it covers. `root` is the signed Merkle root (null when
   * no checkpoint was made).
   */
  async function appendSigned(
    tx: Stores,
    container: ContainerRef,
    entries: readonly AppendEntry[],
    now: number,
  ): Promise<{ records: readonly StoredRecord[]; checkpoint: StoredCheckpoint | null; root: Uint8Array | null }> {
    const hasher = hasherFor(container)
    let root: Uint8Array | null = null
    const { result, checkpoint } = await tx.ledger.appendBatch(
      container,
      (head) => {
        assertHeadCovered(container, head)
        return appendBatch(hasher, head.tip, head.range, entries, now)
      },
      (res) => {
        root = res.range.root()
        return checkpointOf(container, res.head.seq, root, now)
      },
    )
    if (checkpoint !== null && root !== null) remember(container, checkpoint, root)
    return { records: result.records, checkpoint, root: root as Uint8Array | null }
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
  ): Promise<Map<string, (StoredRecord | null)[]>> {
    const now = clock.now()
    const results = new Map<string, (StoredRecord | null)[]>()
    const headsEntries = new Map<string, HeadsLogEntry[]>()
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
      const { records, checkpoint, root } = await appendSigned(tx, container, appends, now)
      let i = 0
      results.set(
        k,
        entries.map((e) => (e.kind === 'append' ? records[i++]! : null)),
      )
      if (checkpoint !== null && root !== null) addHeads(container, checkpoint.size, root)
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
      await appendSigned(tx, heads, entries, now)
    }
    return results
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
          return await stores.transaction((tx) => commitGroups(tx, groups))
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
    return { userId: request.userId, canonical: canonicalRecordBody(request.body as RecordBodyInput) }
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
    let appended: Awaited<ReturnType<typeof appendSigned>>
    try {
      // Signed in the caller's transaction: it commits (or rolls back) with the records it covers.
      appended = await appendSigned(tx, container, prepared, clock.now())
    } catch (error) {
      if (error instanceof ChainNotCoveredError) raiseAlarm(error)
      throw error
    }
    const { checkpoint, root } = appended
    tx.afterCommit(() => {
      if (checkpoint === null || root === null) return
      // The heads log records it in the next flush (its lock is only ever taken last, by a flush).
      queue
        .submit(container, { kind: 'heads', size: checkpoint.size, root })
        .catch((error: unknown) => deps.onBackgroundError?.(error, `the heads-log entry of ${container.containerId} after a decision`))
    })
    return [...appended.records]
  }

  return {
    append,
    prepareAppend: (requests) => requests.map(prepare),
    submitPrepared: submit,
    appendInTransaction,
    stats: () => ({ ...stats }),
    close: () => queue.close(),
    drain: () => queue.drain(),
  }
}
