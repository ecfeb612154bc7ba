/**
 * @module
 * Whole-chain verification of one activity-log container as a library (tessera fsck style): the
 * HTTP verify route, the corrections log and the offline `verify-export` all call this (spec 2.7,
 * 3, 4.5; design §8; ledger note §3.4-3.5 and the attack catalogue in §4).
 *
 * It streams the stored records in RecordID order exactly as stored, recomputing every digest and
 * link, and alongside builds the RFC 9162 compact range to compare against every anchor it was
 * given: the stored head row, signed checkpoints (from the database and one the caller kept) and
 * the workspace heads-log entries. Memory is O(log n) plus the duplicate-predecessor window
 * (`forkWindow` entries, default 16,384, about 2 MB).
 *
 * Verdict rules:
 * - `Valid`: null without a RecordID; otherwise that record's own digest recomputes and its
 *   RecordID text is its sequence (literal meaning: an edited record whose digest was recomputed
 *   is Valid while the chain is not). Missing but within the attested range: false. Past the
 *   attested tip: a not-found result (404), never a verdict.
 * - `Empty`: no records, no head row and no anchor saying anything was ever written.
 * - `BrokenAt`: the lowest RecordID where a digest, RecordID text, link, presence, uniqueness,
 *   canonical form or the head row does not hold; for a rewrite that is internally consistent but
 *   contradicts a signed root, the RecordID after the largest anchor that still matches (a lower
 *   bound: more frequent checkpoints localise better).
 * - `ForkDetected`: two records with one RecordID, two records with one predecessor, records that
 *   no longer hash to a signed root, or two signed roots that contradict each other.
 * - `Reason`: a stable code, then words; always says how many tail records no signed checkpoint
 *   covers yet.
 */

import { isCanonicalJson } from '../../shared/canonical-json.js'
import type { HeadsLogEntry, VerifiedCheckpoint } from './checkpoint.js'
import { CheckpointError, openCheckpoint } from './checkpoint.js'
import { createRecordHasher, digestsEqual } from './digest.js'
import type { ContainerRef, StoredHead, StoredRecord } from './ledger-types.js'
import { type CompactRange, createCompactRange, EMPTY_ROOT, hashesEqual, verifyConsistency } from './merkle.js'
import { formatRecordId, MAX_RECORD_SEQ } from './record-id.js'
import type { NoteVerifierKey } from './signed-note.js'

/** The verdict as the spec names its fields (2.7); the HTTP route and the offline CLI print it as is. */
export interface VerifyVerdict {
  readonly Valid: boolean | null
  readonly ChainValid: boolean
  readonly Empty: boolean
  readonly BrokenAt: string | null
  readonly ForkDetected: boolean
  readonly Reason: string
}

export type VerifyReasonCode =
  | 'OK'
  | 'EMPTY'
  | 'DIGEST_MISMATCH'
  | 'RECORD_ID_MISMATCH'
  | 'LINK_MISMATCH'
  | 'MISSING'
  | 'TRUNCATED'
  | 'FORK_DUP_SEQ'
  | 'FORK_DUP_PREV'
  | 'SPLIT_VIEW'
  | 'CONFLICTING_CHECKPOINTS'
  | 'NON_CANONICAL'
  | 'HEAD_MISMATCH'
  | 'INVALID_SEQUENCE'
  | 'FIELD_MISMATCH'
  | 'UNCOVERED'
  | 'UNVERIFIABLE_CHECKPOINT'
  | 'HEADS_LOG_MISMATCH'

/** Machine-readable detail behind the verdict (for logs, the CLI's --verbose, tests). */
export interface VerifyFacts {
  /** The code the Reason starts with (the problem at BrokenAt, or OK / EMPTY). */
  readonly code: VerifyReasonCode
  /** Every problem found, lowest RecordID first (at most 100 kept; `findingCount` has the total). */
  readonly findings: readonly VerifyFinding[]
  readonly findingCount: number
  readonly recordsRead: number
  /** Highest sequence among the stored records (0 when there are none). */
  readonly lastSeq: number
  /** max(head row, valid checkpoints, heads-log entries): how far the chain is known to reach. */
  readonly attestedSize: number
  /** Largest signed-checkpoint size whose root the stored records reproduce (0 when none). */
  readonly coveredSize: number
  readonly checkpointsUsed: number
  readonly checkpointsIgnored: readonly { readonly source: 'stored' | 'late'; readonly reason: string }[]
}

export interface VerifyFinding {
  readonly seq: number
  readonly code: VerifyReasonCode
  readonly message: string
  readonly fork: boolean
}

export type VerifyResult =
  | { readonly kind: 'verdict'; readonly verdict: VerifyVerdict; readonly facts: VerifyFacts }
  /** The RecordID is past the attested tip (or the container is Empty): the route answers 404. */
  | { readonly kind: 'record-not-found'; readonly recordId: string; readonly message: string }
  /** The caller's TrustedCheckpoint is unusable (bad signature, unknown key, wrong origin): 400. */
  | { readonly kind: 'invalid-trusted-checkpoint'; readonly message: string }

export interface VerifyChainOptions {
  readonly container: ContainerRef
  /** This container's checkpoint origin line (checkpointOrigin); checkpoints for others are ignored. */
  readonly origin: string
  /** The head row read in the same snapshot as the records, or null when there is none. */
  readonly head: StoredHead | null
  /** Signed checkpoint notes from the database (a convenience copy; each is verified before use). */
  readonly storedCheckpoints?: Iterable<string>
  /** The workspace heads log's entries for this container. */
  readonly headsLog?: Iterable<HeadsLogEntry>
  /** A checkpoint note the caller kept (spec: TrustedCheckpoint). */
  readonly trustedCheckpoint?: string | null
  /** Verifier keys (type 0x01) whose checkpoint signatures count. */
  readonly trustedKeys: readonly NoteVerifierKey[]
  /** The parsed RecordID to check as well (parseRecordId's seq), or null for a whole-chain verify. */
  readonly recordSeq?: number | null
  /**
   * How many recent predecessors are remembered to spot two records sharing one (default 16,384,
   * about 2 MB). A fork whose second branch starts further back still breaks the chain; it is then
   * reported as a link/digest break without the fork flag.
   */
  readonly forkWindow?: number
  /** Also check every body is in RFC 8785 canonical form (default true). */
  readonly checkCanonical?: boolean
  /**
   * Verify a range that does not start at genesis (a partial export): the first expected record
   * is `seq`, linking to `prevDigest`, and `range` is the compact range of the `seq - 1` records
   * before it (unauthenticated on its own: it only counts once the records on top of it reproduce a
   * signed root). Without `range`, no checkpoint can be compared.
   */
  readonly start?: { readonly seq: number; readonly prevDigest: Uint8Array; readonly range: CompactRange | null }
  /**
   * The range is meant to end here (a partial export): anchors for larger sizes describe records
   * outside it, so they neither attest truncation nor get compared.
   */
  readonly rangeEnd?: number
  /** Checkpoints will be added with addLateCheckpoint: keep the Merkle range up to the last record. */
  readonly lateCheckpoints?: boolean
  /**
   * The writer signs a checkpoint in the same transaction as every batch it commits (this service
   * does), so records past every signed checkpoint were not written by it: report them as
   * UNCOVERED (ChainValid false, BrokenAt at the first of them) rather than "not yet covered".
   */
  readonly requireCoverage?: boolean
  /**
   * A problem found outside the records (the heads log contradicts the caller's heads-log
   * checkpoint): reported at `seq` with this code. It makes the verdict fail and never Empty.
   */
  readonly externalFinding?: { readonly seq: number; readonly code: VerifyReasonCode; readonly message: string; readonly fork: boolean }
}

/** verifyChain plus the stored records: an iterable or async iterable in (seq, storage) order. */
export interface VerifyChainInput extends VerifyChainOptions {
  readonly records: Iterable<StoredRecord> | AsyncIterable<StoredRecord>
}

/** Streams `input.records` through a ChainVerifier and returns its result. */
export async function verifyChain(input: VerifyChainInput): Promise<VerifyResult> {
  const v = createChainVerifier(input)
  if (v.rejected) return v.finish()
  for await (const r of input.records) v.add(r)
  return v.finish()
}

/** The same for synchronous iterables (arrays, better-sqlite3 `iterate()`). */
export function verifyChainSync(input: VerifyChainOptions & { readonly records: Iterable<StoredRecord> }): VerifyResult {
  const v = createChainVerifier(input)
  if (v.rejected) return v.finish()
  for (const r of input.records) v.add(r)
  return v.finish()
}

/**
 * Push-style verifier, for a storage cursor that yields rows one at a time. Records MUST arrive in
 * ascending `seq` order (rows with equal seq in any order); a record with a smaller seq than the one
 * before it is reported as a break (INVALID_SEQUENCE) and otherwise skipped. `rejected` is true when
 * the trusted checkpoint was unusable: skip the scan and call finish.
 */
export interface ChainVerifier {
  readonly rejected: boolean
  /**
   * Adds the next record. `fieldProblem`, when given, is a finding about this record that only the
   * caller can see (an export whose displayed fields disagree with the canonical text).
   */
  add(record: StoredRecord, fieldProblem?: string): void
  /**
   * A signed checkpoint that arrives after the records (an export's trailer). It is compared with
   * the records at finish(): directly when its size is the last record's, through `consistencyProof`
   * (RFC 9162, from its size to the last record) when smaller. Invalid notes are ignored, with the
   * reason in the verdict. `extraKeys` are trusted for this note in addition to `trustedKeys`.
   */
  addLateCheckpoint(note: string, consistencyProof?: readonly Uint8Array[], extraKeys?: readonly NoteVerifierKey[]): void
  finish(): VerifyResult
}

interface Anchor {
  readonly size: number
  readonly root: Uint8Array
  readonly source: string
  readonly signed: boolean
  matched: boolean | null
}

const MAX_FINDINGS_KEPT = 100

export function createChainVerifier(options: VerifyChainOptions): ChainVerifier {
  const { container, head } = options
  const hasher = createRecordHasher(container.workspaceId, container.containerId)
  const genesis = hasher.genesis
  const checkCanonical = options.checkCanonical ?? true
  const forkWindow = Math.max(1, options.forkWindow ?? 16_384)
  const target = options.recordSeq ?? null

  // --- anchors ---------------------------------------------------------------------------------
  const anchors: Anchor[] = []
  const ignored: { source: 'stored' | 'late'; reason: string }[] = []
  const rangeEnd = options.rangeEnd ?? Number.POSITIVE_INFINITY
  const startSeq = options.start?.seq ?? 1
  if (!Number.isSafeInteger(startSeq) || startSeq < 1) throw new RangeError(`start.seq must be a positive integer, got ${startSeq}`)
  let rejection: string | null = null
  const open = (note: string): VerifiedCheckpoint => openCheckpoint(note, options.trustedKeys, options.origin)
  // The caller's checkpoint. Outside a partial range (an export) it is never dropped: finish() holds
  // it against the checkpoints the file carries (truncation, rollback, split view).
  let trustedAnchor: Anchor | null = null
  if (options.trustedCheckpoint != null) {
    try {
      const cp = open(options.trustedCheckpoint)
      trustedAnchor = { size: cp.size, root: cp.root, source: `the trusted checkpoint (size ${cp.size})`, signed: true, matched: null }
      anchors.push(trustedAnchor)
    } catch (err) {
      if (!(err instanceof CheckpointError)) throw err
      rejection = `TrustedCheckpoint is not usable: ${err.message}`
    }
  }
  for (const note of options.storedCheckpoints ?? []) {
    try {
      const cp = open(note)
      anchors.push({ size: cp.size, root: cp.root, source: `a stored checkpoint (size ${cp.size})`, signed: true, matched: null })
    } catch (err) {
      if (!(err instanceof CheckpointError)) throw err
      ignored.push({ source: 'stored', reason: err.message })
    }
  }
  for (const e of options.headsLog ?? []) {
    if (e.containerId !== container.containerId) continue
    anchors.push({ size: e.size, root: e.root, source: `the workspace heads log (size ${e.size})`, signed: false, matched: null })
  }
  // A partial range: anchors past its end describe other records; anchors before its start cannot be
  // recomputed from it (the prefix range is compared only at exactly its own size).
  let trustedOutside: Anchor | null = null
  for (let i = anchors.length - 1; i >= 0; i--) {
    const a = anchors[i]!
    if (a.size > rangeEnd || a.size < startSeq - 1) {
      if (a === trustedAnchor) trustedOutside = a
      anchors.splice(i, 1)
    }
  }
  // Valid checkpoints that arrived late (an export's trailer), for the trusted one outside the range.
  const lateValid: VerifiedCheckpoint[] = []
  anchors.sort((a, b) => a.size - b.size)

  // --- findings --------------------------------------------------------------------------------
  const findings: VerifyFinding[] = []
  let findingCount = 0
  let lowest: VerifyFinding | null = null
  let forkDetected = false
  function note(seq: number, code: VerifyReasonCode, message: string, fork = false): void {
    const f: VerifyFinding = { seq, code, message, fork }
    findingCount++
    if (fork) forkDetected = true
    if (lowest === null || seq < lowest.seq) lowest = f
    if (findings.length < MAX_FINDINGS_KEPT) findings.push(f)
  }

  // Two signed roots for one size contradict each other whatever the records say (rule d).
  const conflicts: string[] = []
  const firstSigned = new Map<number, Anchor>()
  for (const a of anchors) {
    if (!a.signed) continue
    const other = firstSigned.get(a.size)
    if (other === undefined) firstSigned.set(a.size, a)
    else if (!hashesEqual(other.root, a.root)) {
      forkDetected = true
      conflicts.push(`${other.source} and ${a.source} sign different roots`)
    }
  }

  // --- streaming state -------------------------------------------------------------------------
  const range = options.start?.range?.clone() ?? createCompactRange()
  if (range.size !== startSeq - 1 && options.start?.range) {
    throw new RangeError(`start.range has size ${range.size}, expected ${startSeq - 1}`)
  }
  // false after a gap (roots past it cannot be compared; the gap explains them), or when a partial
  // range comes without the compact range of what precedes it.
  let merkleIntact = range.size === startSeq - 1
  let nextAnchor = 0
  let curSeq = startSeq - 1
  // Stored digests of the records at curSeq: the predecessor of the first expected record.
  let curDigests: Uint8Array[] = [options.start?.prevDigest ?? genesis]
  let prevDigests: Uint8Array[] | null = null // the same for curSeq - 1, for duplicates of curSeq
  let recordsRead = 0
  let targetHits = 0
  let targetOk = true
  let coveredSize = 0
  // Duplicate predecessors. Two records can only name one predecessor if one of them has a broken
  // link, sits after a gap or repeats a RecordID: until the first such irregularity, every record's
  // predecessor is the digest of the record before it. So the hot path only keeps a ring of recent
  // digests (no allocation), and the predecessor map (latin1 text of 32 bytes → the seq claiming
  // it, for the last `forkWindow` records) is seeded from that ring when it is first needed.
  const windowSize = Math.min(forkWindow, 1 << 20)
  const recentDigests = new Array<Uint8Array>(windowSize)
  const recentSeqs = new Array<number>(windowSize)
  let recentAt = 0
  let forkTracking = false
  const prevSeen = new Map<string, number>()
  const prevRing = new Array<string>(windowSize)
  let prevRingAt = 0
  rememberRecent(options.start?.prevDigest ?? genesis, startSeq - 1)

  function rememberRecent(digest: Uint8Array, seq: number): void {
    const slot = recentAt++ % windowSize
    recentDigests[slot] = digest
    recentSeqs[slot] = seq
  }

  function rememberPrev(key: string, claimant: number): void {
    const slot = prevRingAt++ % windowSize
    const evict = prevRing[slot]
    if (evict !== undefined) prevSeen.delete(evict)
    prevRing[slot] = key
    prevSeen.set(key, claimant)
  }

  function startForkTracking(): void {
    forkTracking = true
    // Oldest first. The newest entry is left out: it is the current record's expected predecessor,
    // and the current record is the one that did not claim it cleanly.
    const n = Math.min(recentAt, windowSize)
    for (let i = recentAt - n; i < recentAt - 1; i++) {
      const slot = i % windowSize
      rememberPrev(keyOf(recentDigests[slot]!), recentSeqs[slot]! + 1)
    }
  }
  // Leaves past the largest anchor are never compared with anything, so they are not hashed.
  const merkleLimit = options.lateCheckpoints ? Number.POSITIVE_INFINITY : anchors.length === 0 ? 0 : anchors[anchors.length - 1]!.size
  const late: { note: string; proof: readonly Uint8Array[] | undefined; keys: readonly NoteVerifierKey[] }[] = []

  // Anchors whose root did not match, waiting for the next record: a record edited together with
  // its own digest changes the root at its size, but it is the next record's link that breaks
  // (attack 4), and that explains the mismatch.
  let pendingMismatches: Anchor[] = []

  compareAnchorsUpTo(0)

  function compareAnchorsUpTo(size: number): void {
    while (nextAnchor < anchors.length && anchors[nextAnchor]!.size <= size) {
      const a = anchors[nextAnchor++]!
      if (a.size !== range.size || !merkleIntact) continue // not comparable: an earlier break explains it
      const root = a.size === 0 ? EMPTY_ROOT : range.root()
      if (hashesEqual(root, a.root)) judge(a, true)
      else {
        a.matched = false
        pendingMismatches.push(a)
      }
    }
  }

  /** Judges the waiting mismatches once record `seq` was checked (`linkBroken`: its link failed). */
  function settleMismatches(seq: number, linkBroken: boolean): void {
    if (pendingMismatches.length === 0) return
    const waiting = pendingMismatches
    pendingMismatches = []
    for (const a of waiting) {
      if (a.size + 1 === seq && linkBroken) continue // explained by the broken link right after it
      if (a.size + 1 > seq) pendingMismatches.push(a)
      else judge(a, false)
    }
  }

  function judge(a: Anchor, matched: boolean): void {
    a.matched = matched
    if (matched) {
      if (a.signed) coveredSize = Math.max(coveredSize, a.size)
      return
    }
    // A mismatch explained by a local break at or before this size is not a second fork.
    if (lowest !== null && (lowest as VerifyFinding).seq <= a.size) return
    // Lower bound: just after the largest smaller anchor the records still reproduce.
    let from = startSeq
    for (const m of anchors) if (m.matched === true && m.size < a.size) from = Math.max(from, m.size + 1)
    note(
      from,
      'SPLIT_VIEW',
      `records ${formatRecordId(from)} to ${formatRecordId(a.size)} no longer hash to the root ${a.signed ? 'signed' : 'recorded'} in ${a.source}`,
      true,
    )
  }

  function keyOf(d: Uint8Array): string {
    return (Buffer.isBuffer(d) ? d : Buffer.from(d.buffer, d.byteOffset, d.byteLength)).toString('latin1')
  }

  function add(r: StoredRecord, fieldProblem?: string): void {
    recordsRead++
    const seq = r.seq
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > MAX_RECORD_SEQ) {
      note(1, 'INVALID_SEQUENCE', `a stored record has sequence ${String(seq)}, which no RecordID can name`)
      return
    }
    if (seq < curSeq) {
      // Out of order: from a database scan a bug, from an export file an edit. Either way the record
      // cannot sit where it is; it counts as a break at the position it occupies.
      note(curSeq + 1, 'INVALID_SEQUENCE', `a record claiming RecordID ${formatRecordId(seq)} appears after ${formatRecordId(curSeq)}`)
      return
    }
    const recordId = formatRecordId(seq)
    const contiguous = seq === curSeq + 1
    let linkBase: Uint8Array[] | null
    if (seq === curSeq) {
      note(seq, 'FORK_DUP_SEQ', `two records claim RecordID ${recordId}`, true)
      linkBase = prevDigests
    } else {
      // The group at curSeq is complete (duplicates included): anchors of that size can be judged.
      compareAnchorsUpTo(curSeq)
      if (seq > curSeq + 1) {
        const first = curSeq + 1
        note(
          first,
          'MISSING',
          seq - first === 1
            ? `record ${formatRecordId(first)} is missing`
            : `records ${formatRecordId(first)} to ${formatRecordId(seq - 1)} are missing`,
        )
        merkleIntact = false
        linkBase = null
        prevDigests = null
      } else {
        linkBase = curDigests
        prevDigests = curDigests
      }
      curSeq = seq
      curDigests = []
    }

    const linkOk = linkBase !== null && linksTo(r.prevDigest, linkBase)
    if (!forkTracking && !(contiguous && linkOk)) startForkTracking()
    if (forkTracking) {
      // Two records naming one predecessor: a second branch (UNIQUE(container, prev) dropped).
      const prevKey = keyOf(r.prevDigest)
      const claimedBy = prevSeen.get(prevKey)
      if (claimedBy !== undefined && claimedBy !== seq) {
        note(seq, 'FORK_DUP_PREV', `records ${formatRecordId(claimedBy)} and ${recordId} both claim the same predecessor`, true)
      } else if (seq !== 1 && digestsEqual(r.prevDigest, genesis)) {
        note(seq, 'FORK_DUP_PREV', `record ${recordId} claims the container's genesis as its predecessor, like record 000000000001`, true)
      } else if (claimedBy === undefined) {
        rememberPrev(prevKey, seq)
      }
    } else {
      rememberRecent(r.digest, seq)
    }

    if (fieldProblem !== undefined) note(seq, 'FIELD_MISMATCH', `record ${recordId}: ${fieldProblem}`)
    const idOk = r.recordId === recordId && fieldProblem === undefined
    if (!idOk)
      note(
        seq,
        'RECORD_ID_MISMATCH',
        `the record stored at sequence ${seq} carries RecordID ${JSON.stringify(r.recordId)}, not ${recordId}`,
      )

    let digestOk = false
    if (r.prevDigest.length === 32 && r.digest.length === 32) {
      digestOk = digestsEqual(hasher.digest(recordId, r.prevDigest, r.timestamp, r.userId, r.canonical), r.digest)
    }
    const canonicalOk = !checkCanonical || isCanonicalJson(r.canonical)
    if (!digestOk) {
      note(
        seq,
        'DIGEST_MISMATCH',
        `record ${recordId} does not hash to its stored digest${canonicalOk ? '' : '; its body is not in canonical JCS form'}`,
      )
    } else if (!canonicalOk) {
      note(seq, 'NON_CANONICAL', `record ${recordId}'s body is not in canonical JCS form (RFC 8785), although its digest matches`)
    }

    if (linkBase !== null && !linkOk) {
      note(
        seq,
        'LINK_MISMATCH',
        seq === 1
          ? `record ${recordId} does not start from this container's genesis`
          : `record ${recordId} does not link to record ${formatRecordId(seq - 1)}`,
      )
    }
    settleMismatches(seq, linkBase !== null && !linkOk)

    if (seq === target) {
      targetHits++
      targetOk = targetOk && idOk && digestOk
    }

    if (curDigests.length === 0 && merkleIntact && seq === range.size + 1 && seq <= merkleLimit) {
      // The stored digest is the leaf hash (digest.ts); a wrong-length one cannot match any root.
      range.push(r.digest.length === 32 ? r.digest : Buffer.alloc(32))
    }
    curDigests.push(r.digest)
  }

  function addLateCheckpoint(noteText: string, consistencyProof?: readonly Uint8Array[], extraKeys: readonly NoteVerifierKey[] = []): void {
    late.push({ note: noteText, proof: consistencyProof, keys: extraKeys })
  }

  function judgeLate(): void {
    for (const l of late) {
      let cp: VerifiedCheckpoint
      try {
        cp = openCheckpoint(l.note, [...options.trustedKeys, ...l.keys], options.origin)
      } catch (err) {
        if (!(err instanceof CheckpointError)) throw err
        ignored.push({ source: 'late', reason: err.message })
        continue
      }
      lateValid.push(cp)
      if (cp.size !== range.size && l.proof === undefined && cp.size >= startSeq - 1) {
        // Every checkpoint a file carries is checked against its records; one that cannot be is a failure.
        ignored.push({
          source: 'late',
          reason: `the checkpoint of size ${cp.size} comes without the consistency proof that ties it to the records`,
        })
        continue
      }
      if (cp.size > rangeEnd && l.proof !== undefined && merkleIntact && range.size === rangeEnd && range.size >= startSeq) {
        // A checkpoint past the range's end (an export of part of a container): the proof must show
        // the records up to the range's end are a prefix of the signed tree. It attests nothing past
        // the range (those records are not in it), so it is not an anchor for truncation.
        const a: Anchor = { size: cp.size, root: cp.root, source: `the export's checkpoint (size ${cp.size})`, signed: true, matched: null }
        if (verifyConsistency(range.size, cp.size, range.root(), cp.root, l.proof)) coveredSize = Math.max(coveredSize, range.size)
        else judge(a, false)
        continue
      }
      if (cp.size > rangeEnd || cp.size < startSeq - 1) {
        ignored.push({ source: 'late', reason: `a checkpoint of size ${cp.size} lies outside the verified range` })
        continue
      }
      const a: Anchor = { size: cp.size, root: cp.root, source: `the export's checkpoint (size ${cp.size})`, signed: true, matched: null }
      anchors.push(a)
      if (!merkleIntact || a.size > range.size) continue // attests only (or a break explains it)
      if (a.size === range.size) judge(a, hashesEqual(a.size === 0 ? EMPTY_ROOT : range.root(), a.root))
      else if (l.proof !== undefined) judge(a, verifyConsistency(a.size, range.size, a.root, range.root(), l.proof))
    }
  }

  /**
   * The caller's checkpoint lies outside a partial range (an export). Past its end, the file's own
   * newest checkpoint must reach it: a smaller one is truncation or rollback, one of its size with
   * another root is a split view, a larger one comes without a proof to the caller's size.
   */
  function judgeTrustedOutside(): void {
    const t = trustedOutside
    if (t === null) return
    if (t.size < startSeq - 1) {
      note(
        startSeq,
        'UNVERIFIABLE_CHECKPOINT',
        `${t.source} ends before this range starts (${formatRecordId(startSeq)}); this file cannot be checked against it: export from 000000000001`,
      )
      return
    }
    const newest = lateValid.reduce<VerifiedCheckpoint | null>((m, cp) => (m === null || cp.size > m.size ? cp : m), null)
    const same = lateValid.find((cp) => cp.size === t.size)
    if (newest === null || newest.size < t.size) {
      note(
        rangeEnd + 1,
        'TRUNCATED',
        `the export ends at ${formatRecordId(rangeEnd)}${newest === null ? ' and carries no checkpoint' : ` and its newest checkpoint has size ${newest.size}`}, but ${formatRecordId(t.size)} was attested by ${t.source}: the log was truncated or rolled back`,
      )
    } else if (same !== undefined) {
      if (!hashesEqual(same.root, t.root)) {
        note(startSeq, 'SPLIT_VIEW', `the export's checkpoint of size ${t.size} and ${t.source} sign different roots`, true)
      }
    } else {
      note(
        rangeEnd + 1,
        'UNVERIFIABLE_CHECKPOINT',
        `${t.source} lies between the end of this range (${formatRecordId(rangeEnd)}) and the export's newest checkpoint (size ${newest.size}), and the file carries no proof between them: export up to ${formatRecordId(t.size)} or the whole container`,
      )
    }
  }

  function finish(): VerifyResult {
    if (rejection !== null) return { kind: 'invalid-trusted-checkpoint', message: rejection }
    const lastSeq = curSeq
    if (head !== null) {
      if (head.seq < lastSeq) {
        note(
          head.seq + 1,
          'HEAD_MISMATCH',
          `records continue past the stored head (${head.seq === 0 ? 'empty' : formatRecordId(head.seq)}) up to ${formatRecordId(lastSeq)}`,
        )
      } else if (head.seq === lastSeq && lastSeq > 0 && !curDigests.some((d) => digestsEqual(d, head.digest))) {
        note(lastSeq, 'HEAD_MISMATCH', `the stored head names a different digest for ${formatRecordId(lastSeq)} than the record holds`)
      }
    }
    compareAnchorsUpTo(lastSeq)
    settleMismatches(Number.POSITIVE_INFINITY, false)
    // Anchors beyond the stored records cannot be compared; they only attest size.
    nextAnchor = anchors.length
    judgeLate()
    judgeTrustedOutside()

    let attested = head?.seq ?? 0
    let attestedBy = head !== null && head.seq > 0 ? 'the head row' : ''
    for (const a of anchors) {
      if (a.size > attested) {
        attested = a.size
        attestedBy = a.source
      }
    }
    if (attested > lastSeq) {
      note(
        lastSeq + 1,
        'TRUNCATED',
        lastSeq === 0
          ? `no records are stored but ${formatRecordId(attested)} was attested by ${attestedBy}`
          : `the store ends at ${formatRecordId(lastSeq)} but ${formatRecordId(attested)} was attested by ${attestedBy}`,
      )
    }

    const external = options.externalFinding
    if (external !== undefined) note(external.seq, external.code, external.message, external.fork)
    const empty = recordsRead === 0 && head === null && attested === 0 && startSeq === 1 && external === undefined
    if (options.requireCoverage && !empty && lastSeq >= startSeq) {
      // The writer signs every batch in its own transaction: a record past every checkpoint it signed
      // (matching or not: a mismatch is reported as such) was not written by it.
      let reach = startSeq - 1
      for (const a of anchors) if (a.signed) reach = Math.max(reach, a.size)
      for (const cp of lateValid) reach = Math.max(reach, Math.min(cp.size, rangeEnd))
      reach = Math.max(reach, coveredSize)
      if (reach < lastSeq) {
        const from = reach + 1
        note(
          from,
          'UNCOVERED',
          `${from === lastSeq ? `record ${formatRecordId(from)} is` : `records ${formatRecordId(from)} to ${formatRecordId(lastSeq)} are`} not covered by any checkpoint this server signed; it signs every batch it commits in the same transaction, so ${from === lastSeq ? 'this record was' : 'these records were'} written around it (or its checkpoints were deleted)`,
        )
      }
    }
    const tip = Math.max(lastSeq, attested)
    // A failure outside the records (the heads log) leaves the size unknown: a verdict, never a 404.
    if (target !== null && (empty || (target > tip && external === undefined))) {
      return {
        kind: 'record-not-found',
        recordId: formatRecordId(target),
        message: empty
          ? `RecordID ${formatRecordId(target)} does not exist: the container is empty`
          : `RecordID ${formatRecordId(target)} does not exist: the chain ends at ${formatRecordId(tip)}`,
      }
    }

    const sorted = findings.slice().sort((a, b) => a.seq - b.seq)
    const primary: VerifyFinding | null = lowest
    const chainValid = primary === null && conflicts.length === 0
    let reason: string
    let code: VerifyReasonCode
    if (empty) {
      code = 'EMPTY'
      reason = 'EMPTY: nothing to check: the container has no records and never had any'
    } else if (primary === null) {
      code = conflicts.length > 0 ? 'CONFLICTING_CHECKPOINTS' : 'OK'
      reason =
        conflicts.length > 0
          ? `CONFLICTING_CHECKPOINTS: ${conflicts.join('; ')}`
          : lastSeq < startSeq
            ? 'OK: no records in this range'
            : `OK: ${lastSeq - startSeq + 1 === 1 ? '1 record' : `${lastSeq - startSeq + 1} records`} verified (${formatRecordId(startSeq)} to ${formatRecordId(lastSeq)})`
    } else {
      const p = primary as VerifyFinding
      code = p.code
      reason = `${p.code}: ${p.message}`
      const others = sorted.filter((f) => f !== p)
      if (others.length > 0) {
        const shown = others.slice(0, 3).map((f) => `${f.code} at ${formatRecordId(f.seq)}`)
        const more = findingCount - 1 - shown.length
        reason += `; also ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`
      }
      if (conflicts.length > 0) reason += `; ${conflicts.join('; ')}`
    }
    if (!empty) {
      if (lastSeq < startSeq || !chainValid) {
        // Everything is gone, or something failed: coverage would only distract from the failure.
      } else if (coveredSize >= lastSeq) {
        reason += `; all records are covered by a signed checkpoint (size ${coveredSize})`
      } else if (coveredSize < startSeq) {
        const n = lastSeq - startSeq + 1
        reason += `; no signed checkpoint covers ${n === 1 ? 'the record' : `any of the ${n} records`} yet`
      } else {
        const n = lastSeq - coveredSize
        reason += `; ${n} record${n === 1 ? '' : 's'} after ${formatRecordId(coveredSize)} not yet covered by a signed checkpoint`
      }
      if (ignored.length > 0) {
        reason += `; ${ignored.length} checkpoint${ignored.length === 1 ? '' : 's'} ignored (${ignored.map((i) => i.reason).join('; ')})`
      }
    }

    const valid = target === null ? null : targetHits > 0 ? targetOk : false
    return {
      kind: 'verdict',
      verdict: {
        Valid: valid,
        ChainValid: empty ? true : chainValid,
        Empty: empty,
        BrokenAt: primary === null ? null : formatRecordId((primary as VerifyFinding).seq),
        ForkDetected: forkDetected,
        Reason: reason,
      },
      facts: {
        code,
        findings: sorted,
        findingCount,
        recordsRead,
        lastSeq,
        attestedSize: attested,
        coveredSize,
        checkpointsUsed: anchors.filter((a) => a.signed).length,
        checkpointsIgnored: ignored,
      },
    }
  }

  return { rejected: rejection !== null, add, addLateCheckpoint, finish }
}

function linksTo(prev: Uint8Array, candidates: readonly Uint8Array[]): boolean {
  for (let i = 0; i < candidates.length; i++) if (digestsEqual(prev, candidates[i]!)) return true
  return false
}
