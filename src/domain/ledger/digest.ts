/**
 * @module
 * The record digest, layout v1 (design §8; the byte layout and known-answer vectors are in
 * docs/design/ledger.md, which is normative for third-party verifiers):
 *
 *     lp(x)     = u64be(byte length of x) ‖ x          strings are UTF-8
 *     genesis   = SHA-256( lp("provenant/activity-log/v1/genesis") ‖ lp(workspaceId) ‖ lp(containerId) )
 *     digest    = SHA-256( 0x00                         RFC 9162 leaf prefix (see below)
 *                          ‖ lp("provenant/activity-log/v1/record")
 *                          ‖ lp(workspaceId) ‖ lp(containerId)
 *                          ‖ RecordID                   12 ASCII digits, fixed width
 *                          ‖ prev                       32 raw bytes; genesis for RecordID 000000000001
 *                          ‖ lp(timestamp)              "YYYY-MM-DDTHH:mm:ss.sssZ" as stored
 *                          ‖ lp(userId)
 *                          ‖ lp(canonical) )            the body's RFC 8785 text as stored
 *
 * The leading 0x00 makes the record digest at the same time the record's RFC 9162 Merkle leaf hash
 * (leaf data = the preimage after that byte), so the tree over a container costs one SHA-256 per
 * record less in append and verify. Digests are raw 32-byte values everywhere they are hashed or
 * compared; text forms (exports, docs) use lowercase hex. Versioned tags keep a record digest from
 * ever being valid as a genesis value, a Merkle node (prefix 0x01) or another version's digest.
 */
import { hash } from 'node:crypto'
import { canonicalJson } from '../../shared/canonical-json.js'
import type { JsonObject } from '../../shared/strict-json.js'
import type { RecordBody, RecordBodyInput } from './ledger-types.js'

export const LEDGER_ALG_VERSION = 1
export const RECORD_TAG = 'provenant/activity-log/v1/record'
export const GENESIS_TAG = 'provenant/activity-log/v1/genesis'
export const DIGEST_BYTES = 32
/** RFC 9162's leaf prefix, first byte of every record preimage. */
export const RECORD_PREIMAGE_PREFIX = 0x00

/** The workspace-level Platform-Config container (the platform's own change history, spec 4.5 rule 1). */
export const PLATFORM_CONTAINER_ID = 'platform'

/**
 * The container id of a ScopeKey's chain. The `scope:` prefix keeps every scope apart from the
 * reserved ids (`platform`, and any later ones such as the heads log), whatever the key's text.
 */
export function containerIdForScope(scopeKey: string): string {
  return `scope:${scopeKey}`
}

/** SHA-256 of the genesis tag and the length-prefixed workspace and container ids. */
export function genesisDigest(workspaceId: string, containerId: string): Buffer {
  return hash('sha256', Buffer.concat([lp(GENESIS_TAG), lp(workspaceId), lp(containerId)]), 'buffer')
}

/** Everything the digest covers, as stored. */
export interface DigestInput {
  readonly workspaceId: string
  readonly containerId: string
  readonly recordId: string
  readonly prevDigest: Uint8Array
  readonly timestamp: string
  readonly userId: string
  readonly canonical: string
}

/** The exact bytes that are hashed (for documentation and known-answer tests). */
export function recordPreimage(input: DigestInput): Buffer {
  const h = createRecordHasher(input.workspaceId, input.containerId)
  return Buffer.from(h.preimage(input.recordId, input.prevDigest, input.timestamp, input.userId, input.canonical))
}

/** One-off record digest. For many records of one container use createRecordHasher. */
export function recordDigest(input: DigestInput): Buffer {
  return createRecordHasher(input.workspaceId, input.containerId).digest(
    input.recordId,
    input.prevDigest,
    input.timestamp,
    input.userId,
    input.canonical,
  )
}

/**
 * Digests for one container: the tag and ids are encoded once and every record is laid out in one
 * reused scratch buffer, so a record costs one UTF-8 write per string field and one SHA-256 call.
 * Not safe to share across concurrent async flows (it is synchronous, so sharing within one is fine).
 */
export interface RecordHasher {
  readonly workspaceId: string
  readonly containerId: string
  /** The predecessor of record 000000000001. */
  readonly genesis: Buffer
  digest(recordId: string, prevDigest: Uint8Array, timestamp: string, userId: string, canonical: string): Buffer
  /** The hashed bytes; a view of the scratch buffer, valid until the next call. */
  preimage(recordId: string, prevDigest: Uint8Array, timestamp: string, userId: string, canonical: string): Uint8Array
}

export function createRecordHasher(workspaceId: string, containerId: string): RecordHasher {
  const prefix = Buffer.concat([Buffer.from([RECORD_PREIMAGE_PREFIX]), lp(RECORD_TAG), lp(workspaceId), lp(containerId)])
  let scratch = Buffer.allocUnsafe(Math.max(1024, prefix.length * 2))
  prefix.copy(scratch, 0)

  /** Grows the scratch buffer to `size`, keeping the `used` bytes already laid out. */
  function ensure(size: number, used: number): void {
    if (size <= scratch.length) return
    const bigger = Buffer.allocUnsafe(Math.max(size, scratch.length * 2))
    scratch.copy(bigger, 0, 0, used)
    scratch = bigger
  }

  function writeLp(s: string, off: number): number {
    // Reserve the worst case (3 bytes per UTF-16 unit), write, then backfill the real length.
    ensure(off + 8 + s.length * 3, off)
    const n = scratch.write(s, off + 8, 'utf8')
    scratch.writeUInt32BE(0, off) // high word: fields are far below 4 GiB
    scratch.writeUInt32BE(n, off + 4)
    return off + 8 + n
  }

  function layout(recordId: string, prevDigest: Uint8Array, timestamp: string, userId: string, canonical: string): number {
    if (recordId.length !== 12 || !/^[0-9]{12}$/.test(recordId)) {
      throw new RangeError(`not a RecordID: ${JSON.stringify(recordId)}`)
    }
    if (prevDigest.length !== DIGEST_BYTES) {
      throw new RangeError(`previous digest must be ${DIGEST_BYTES} bytes, got ${prevDigest.length}`)
    }
    let off = prefix.length
    ensure(off + 12 + DIGEST_BYTES, off)
    scratch.write(recordId, off, 'latin1')
    off += 12
    scratch.set(prevDigest, off)
    off += DIGEST_BYTES
    off = writeLp(timestamp, off)
    off = writeLp(userId, off)
    off = writeLp(canonical, off)
    return off
  }

  return {
    workspaceId,
    containerId,
    genesis: genesisDigest(workspaceId, containerId),
    digest(recordId, prevDigest, timestamp, userId, canonical) {
      const end = layout(recordId, prevDigest, timestamp, userId, canonical)
      return hash('sha256', scratch.subarray(0, end), 'buffer')
    },
    preimage(recordId, prevDigest, timestamp, userId, canonical) {
      const end = layout(recordId, prevDigest, timestamp, userId, canonical)
      return scratch.subarray(0, end)
    },
  }
}

/**
 * The canonical text of a record body: always the five members, absent ones as null, so the
 * stored text has one shape (design §4, §8). Throws TypeError for a field of the wrong type and
 * CanonicalJsonError for details that are not plain JSON.
 */
export function canonicalRecordBody(body: RecordBodyInput): string {
  const normalised: RecordBody = {
    ScopeKey: optionalString(body.ScopeKey, 'ScopeKey'),
    entityType: optionalString(body.entityType, 'entityType'),
    entityId: optionalString(body.entityId, 'entityId'),
    actionType: optionalString(body.actionType, 'actionType'),
    details: detailsObject(body.details),
  }
  return canonicalJson(normalised)
}

function optionalString(v: unknown, name: string): string | null {
  if (v === undefined || v === null) return null
  if (typeof v !== 'string') throw new TypeError(`${name} must be a string or null, got ${typeof v}`)
  return v
}

function detailsObject(v: unknown): JsonObject {
  if (v === undefined || v === null) return {}
  if (typeof v !== 'object' || Array.isArray(v)) throw new TypeError('details must be a JSON object')
  return v as JsonObject
}

/** Milliseconds → the stored timestamp form (UTC, millisecond precision, `Z`). */
export function formatLedgerTimestamp(ms: number): string {
  return new Date(ms).toISOString()
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/**
 * The timestamp for the next record: the clock, but never earlier than the tip's (clocks of
 * several instances differ; PostgreSQL's now() is the transaction start), so timestamps are
 * non-decreasing along the chain (ledger note §3.2).
 */
export function nextLedgerTimestamp(nowMs: number, tipTimestamp: string | null): string {
  if (tipTimestamp === null) return formatLedgerTimestamp(nowMs)
  const tipMs = Date.parse(tipTimestamp)
  if (!TIMESTAMP.test(tipTimestamp) || Number.isNaN(tipMs)) {
    throw new RangeError(`tip timestamp ${JSON.stringify(tipTimestamp)} is not in the stored form`)
  }
  return formatLedgerTimestamp(Math.max(nowMs, tipMs))
}

/**
 * Equality of two digests as raw bytes (never compare hex text, which case-folds). Digests are
 * public values, so this is a plain memcmp rather than a constant-time comparison.
 */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.length > 0 && Buffer.compare(a, b) === 0
}

function lp(s: string): Buffer {
  const body = Buffer.from(s, 'utf8')
  const out = Buffer.allocUnsafe(8 + body.length)
  out.writeUInt32BE(0, 0)
  out.writeUInt32BE(body.length, 4)
  body.copy(out, 8)
  return out
}
