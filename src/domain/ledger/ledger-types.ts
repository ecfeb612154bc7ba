/**
 * @module
 * The plain data the ledger core passes around: a container's identity, a record as stored, the
 * stored head. Storage adapters (a later phase) map their rows onto these shapes; nothing here knows
 * about SQL, HTTP or wire spelling (design §2, style notes §6.4).
 */
import type { JsonObject } from '../../shared/strict-json.js'

/**
 * One hash chain: per (workspace, ScopeKey) plus the workspace-level Platform-Config container
 * (design §4). Both ids are bound into every digest and into the genesis predecessor, so a record
 * or a whole chain cannot be spliced into another container or workspace.
 */
export interface ContainerRef {
  readonly workspaceId: string
  /** See containerIdForScope / PLATFORM_CONTAINER_ID in digest.ts. */
  readonly containerId: string
}

/**
 * What a caller appends (design §4, §5): `ScopeKey` names the container; `userId` and the timestamp
 * are never part of this, the server sets them. Absent optional fields are stored as null so the
 * canonical text always has the same five members.
 */
/**
 * A body as a caller hands it over, before canonicalRecordBody: every field optional (absent is
 * null). `Details` is what the caller's type system knows of details; they are checked to be plain
 * JSON when the body is made canonical.
 */
export interface RecordBodyInput<Details = JsonObject> {
  readonly ScopeKey?: string | null
  readonly entityType?: string | null
  readonly entityId?: string | null
  readonly actionType?: string | null
  readonly details?: Details | null
}

export interface RecordBody {
  readonly ScopeKey: string | null
  readonly entityType: string | null
  readonly entityId: string | null
  readonly actionType: string | null
  readonly details: JsonObject
}

/**
 * A record exactly as stored. Every field is what the row holds, byte for byte: the verifier
 * recomputes from these and never from a re-rendering (design §8: jsonb and timestamptz text
 * differ from what was hashed).
 */
export interface StoredRecord {
  /** The sequence column (1-based). Storage orders by it. */
  readonly seq: number
  /** The RecordID text column; must equal formatRecordId(seq). */
  readonly recordId: string
  /** 32 bytes: the digest of record seq-1, or the genesis digest for seq 1. */
  readonly prevDigest: Uint8Array
  /** Server-set, `YYYY-MM-DDTHH:mm:ss.sssZ`, stored as text and hashed as stored. */
  readonly timestamp: string
  /** Server-set stable principal id of the actor (never a display name). */
  readonly userId: string
  /** The record body's RFC 8785 canonical text, stored as text and hashed as stored. */
  readonly canonical: string
  /** 32 bytes: recordDigest over the fields above. */
  readonly digest: Uint8Array
}

/**
 * The container's head row: the store's own claim of its tip, updated in the same transaction as
 * every append. Its existence means "something was written here", which keeps `Empty` from
 * masking a deleted chain (attack 12).
 */
export interface StoredHead {
  readonly seq: number
  readonly digest: Uint8Array
}

/** Where the next record attaches: the genesis digest and seq 0 for an unwritten container. */
export interface ChainTip {
  readonly seq: number
  readonly digest: Uint8Array
  /** The tip record's timestamp, or null before the first record. */
  readonly timestamp: string | null
}
