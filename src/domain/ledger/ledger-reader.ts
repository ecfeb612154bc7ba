/**
 * @module
 * The activity log's read path (ledger-contract.ts has the contract): queries, whole-chain verify,
 * RFC 9162 inclusion and consistency proofs and streamed exports, each on one read snapshot.
 */

import { PassThrough } from 'node:stream'
import { HEADS_LOG_CONTAINER_ID, type HeadsLogEntry, openCheckpoint, parseCheckpointBody, parseHeadsLogEntry } from './checkpoint.js'
import { buildExportHeader, createExportWriter, type ExportTrailer, exportSealText } from './export-format.js'
import {
  type CheckpointInfo,
  type ConsistencyProofResult,
  type ExportRequest,
  headsContainer,
  type InclusionProofResult,
  type LedgerContext,
  type LedgerExportStream,
  LedgerRangeError,
  type LedgerRecordView,
  type LedgerService,
  type LedgerServiceDeps,
  type LedgerVerifyRequest,
  viewOf,
} from './ledger-contract.js'
import type { LedgerSnapshot, RecordFilter, RecordPage, StoredCheckpoint } from './ledger-store.js'
import type { ContainerRef, StoredRecord } from './ledger-types.js'
import { type CompactRange, consistencyProof, createCompactRange, inclusionProof, type NodeSource, treeRoot } from './merkle.js'
import { formatRecordId } from './record-id.js'
import { signNote } from './signed-note.js'
import { type VerifyResult, verifyChain } from './verify-chain.js'

/** Heads-log entries used as anchors in one verify at most (the newest, the rest spread out). */
const HEADS_ANCHORS = 64
/** Whole-chain verifies running at once per process; more wait their turn (rule 5: costly, not for polling). */
const MAX_CONCURRENT_VERIFIES = 2

export type LedgerReader = Pick<
  LedgerService,
  'query' | 'verify' | 'proveInclusion' | 'proveConsistency' | 'latestCheckpoint' | 'exportLog'
>

export function createLedgerReader(deps: LedgerServiceDeps, context: LedgerContext): LedgerReader {
  const { stores, signing, clock } = deps
  const { hasherFor, origin } = context

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
  async function verify(args: LedgerVerifyRequest): Promise<VerifyResult> {
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
  function exportLog(req: ExportRequest): Promise<LedgerExportStream> {
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

  return { query, verify, proveInclusion, proveConsistency, latestCheckpoint, exportLog }
}
