/**
 * @module
 * Signed checkpoints of one activity-log container in the C2SP tlog-checkpoint format
 * (c2sp.org/tlog-checkpoint), and the workspace heads log that records them (design §8).
 *
 *     <origin>\n                 unique per workspace + container (checkpointOrigin)
 *     <size>\n                   decimal, no leading zeros ("0" for the empty tree)
 *     <base64 RFC 9162 root>\n
 *                                (blank line)
 *     — <key name> base64(keyID ‖ Ed25519 signature over the three lines)          type 0x01
 *     — <key name> base64(keyID' ‖ u64 time ‖ Ed25519 over "cosignature/v1\ntime <t>\n" ‖ body)   type 0x04
 *
 * Time: the checkpoint body stays the plain three lines (no extension lines, which C2SP marks NOT
 * RECOMMENDED and witnesses do not vouch for). The issue time is carried by a second signature line
 * from the same key: a c2sp.org/tlog-cosignature v1 timestamped cosignature, whose signed message
 * includes `time <POSIX seconds>`. Plain C2SP verifiers ignore that line as an unknown key (its key
 * ID uses type 0x04); ours derive the 0x04 verifier from the trusted 0x01 vkey and report the time.
 * A checkpoint with only the type-0x01 signature is still valid, with time null.
 *
 * The key name is the server's log name (one key for all containers, so one vkey to publish); the
 * origin line names the container. C2SP says the key name SHOULD match the origin: with one key per
 * server that would need one vkey per container, which auditors cannot be expected to configure.
 */

import type { KeyObject } from 'node:crypto'
import { canonicalRecordBody } from './digest.js'
import type { ContainerRef } from './ledger-types.js'
import { HASH_BYTES } from './merkle.js'
import {
  cosign,
  cosignatureVerifierFor,
  decodeBase64Strict,
  NoteError,
  type NoteSigner,
  type NoteVerifierKey,
  type OpenedNote,
  openNote,
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
  signNote,
} from './signed-note.js'

export interface CheckpointBody {
  readonly origin: string
  readonly size: number
  /** The RFC 9162 root of the first `size` record digests (32 bytes). */
  readonly root: Uint8Array
}

export interface VerifiedCheckpoint extends CheckpointBody {
  /** The whole signed note, as given. */
  readonly note: string
  /** Issue time (POSIX seconds) from a verified timestamped cosignature by a trusted key, or null. */
  readonly time: number | null
  /** Names of the trusted keys whose signatures verified. */
  readonly signedBy: readonly string[]
}

export type CheckpointErrorCode = 'malformed-checkpoint' | 'wrong-origin' | 'untrusted' | 'invalid-signature'

export class CheckpointError extends Error {
  readonly code: CheckpointErrorCode
  constructor(code: CheckpointErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'CheckpointError'
    this.code = code
  }
}

/**
 * The origin line of a container's log: `<logName>/activity-log/<workspace>/<container>`, each id
 * percent-encoded (encodeURIComponent), so the line is unique per workspace and container and has
 * no spaces or "+" (C2SP recommends a schema-less URL).
 */
export function checkpointOrigin(logName: string, container: ContainerRef): string {
  if (logName.length === 0 || /[\s+]/u.test(logName))
    throw new RangeError(`log name ${JSON.stringify(logName)} must be non-empty with no spaces or "+"`)
  return `${logName}/activity-log/${encodeURIComponent(container.workspaceId)}/${encodeURIComponent(container.containerId)}`
}

/** The three-line note text of a checkpoint. */
export function formatCheckpointBody(cp: CheckpointBody): string {
  if (cp.origin.length === 0 || cp.origin.includes('\n')) throw new RangeError('origin must be one non-empty line')
  if (!Number.isSafeInteger(cp.size) || cp.size < 0) throw new RangeError(`checkpoint size must be a non-negative integer, got ${cp.size}`)
  if (cp.root.length !== HASH_BYTES) throw new RangeError(`checkpoint root must be ${HASH_BYTES} bytes`)
  return `${cp.origin}\n${cp.size}\n${Buffer.from(cp.root).toString('base64')}\n`
}

/**
 * Parses a checkpoint note text (the part before the signatures). Strict per C2SP: at least three
 * non-empty lines, the size in decimal without sign or leading zeros, the root as canonical base64
 * of exactly 32 bytes. Extension lines are refused: this service never writes them.
 */
export function parseCheckpointBody(text: string): CheckpointBody {
  const bad = (why: string): never => {
    throw new CheckpointError('malformed-checkpoint', `malformed checkpoint: ${why}`)
  }
  if (!text.endsWith('\n')) bad('the text must end with a newline')
  const lines = text.slice(0, -1).split('\n')
  if (lines.length < 3) bad('expected origin, size and root lines')
  if (lines.length > 3) bad('extension lines are not accepted')
  const [origin, size, root] = lines as [string, string, string]
  if (origin.length === 0) bad('empty origin line')
  if (!/^(0|[1-9][0-9]*)$/.test(size)) bad(`size ${JSON.stringify(size)} must be a decimal number without sign or leading zeros`)
  const n = Number(size)
  if (!Number.isSafeInteger(n)) bad(`size ${size} is too large`)
  const rootBytes = decodeBase64Strict(root)
  if (rootBytes === null || rootBytes.length !== HASH_BYTES) bad('the root line must be the standard base64 of a 32-byte hash')
  return { origin, size: n, root: rootBytes! }
}

/**
 * Signs a checkpoint: the Ed25519 note signature plus the timestamped cosignature carrying `time`
 * (POSIX seconds). `key` must be the signer's private key (the same key the signer wraps).
 */
export function signCheckpoint(cp: CheckpointBody, signer: NoteSigner, key: KeyObject, time: number): string {
  const text = formatCheckpointBody(cp)
  return signNote(text, [signer], [cosign(signer.name, key, text, time)])
}

/**
 * Opens a checkpoint note against trusted type-0x01 vkeys. Unknown keys are ignored; a note with
 * no verified trusted signature, a malformed body, or (when `expectedOrigin` is given) another
 * container's origin is refused with a CheckpointError saying which. Attack 16 and 17: such a note
 * is never evidence.
 */
export function openCheckpoint(note: string, trusted: readonly NoteVerifierKey[], expectedOrigin?: string): VerifiedCheckpoint {
  const known = trusted.filter((k) => k.type === SIG_TYPE_ED25519)
  const withCosign = [...known, ...known.map(cosignatureVerifierFor)]
  let opened: OpenedNote
  try {
    opened = openNote(note, withCosign)
  } catch (err) {
    if (err instanceof NoteError) {
      const code: CheckpointErrorCode =
        err.code === 'no-known-signature' ? 'untrusted' : err.code === 'invalid-signature' ? 'invalid-signature' : 'malformed-checkpoint'
      throw new CheckpointError(code, err.message, { cause: err })
    }
    throw err
  }
  const plain = opened.verified.filter((s) => s.verifier.type === SIG_TYPE_ED25519)
  if (plain.length === 0) {
    // A cosignature alone vouches for the body but is not the log's checkpoint signature.
    throw new CheckpointError('untrusted', 'checkpoint has no Ed25519 signature by a trusted key')
  }
  const body = parseCheckpointBody(opened.text)
  if (expectedOrigin !== undefined && body.origin !== expectedOrigin) {
    throw new CheckpointError('wrong-origin', `checkpoint is for ${JSON.stringify(body.origin)}, not ${JSON.stringify(expectedOrigin)}`)
  }
  const stamp = opened.verified.find((s) => s.verifier.type === SIG_TYPE_COSIGNATURE_V1)
  return {
    ...body,
    note,
    time: stamp ? Number(stamp.signature.readBigUInt64BE(0)) : null,
    signedBy: plain.map((s) => s.name),
  }
}

// --- workspace heads log --------------------------------------------------------------------------

/**
 * The heads log is an ordinary activity-log container with this reserved id: every time a
 * container's checkpoint is issued, a record naming that container, size and root is appended to it
 * (and it is itself checkpointed). One auditor-held heads-log checkpoint then proves that a
 * container existed with at least that many records, which defeats deleting a whole container
 * together with its head row (attack 12b).
 */
export const HEADS_LOG_CONTAINER_ID = 'heads'
export const HEADS_LOG_ENTITY_TYPE = 'container-checkpoint'
export const HEADS_LOG_ACTION_TYPE = 'checkpoint'

/** What the heads log says about one container at one time. */
export interface HeadsLogEntry {
  readonly containerId: string
  readonly size: number
  readonly root: Uint8Array
}

/** The canonical record body of a heads-log entry. */
export function headsLogRecordBody(entry: HeadsLogEntry): string {
  return canonicalRecordBody({
    ScopeKey: null,
    entityType: HEADS_LOG_ENTITY_TYPE,
    entityId: entry.containerId,
    actionType: HEADS_LOG_ACTION_TYPE,
    details: { size: entry.size, root: Buffer.from(entry.root).toString('base64') },
  })
}

/** Reads a heads-log entry back from a stored canonical body; null when it is not one. */
export function parseHeadsLogEntry(canonical: string): HeadsLogEntry | null {
  let v: unknown
  try {
    v = JSON.parse(canonical)
  } catch {
    return null
  }
  if (typeof v !== 'object' || v === null) return null
  const r = v as { entityType?: unknown; entityId?: unknown; details?: { size?: unknown; root?: unknown } }
  if (r.entityType !== HEADS_LOG_ENTITY_TYPE || typeof r.entityId !== 'string') return null
  const size = r.details?.size
  const root = typeof r.details?.root === 'string' ? decodeBase64Strict(r.details.root) : null
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || root === null || root.length !== HASH_BYTES) return null
  return { containerId: r.entityId, size, root }
}
