/**
 * @module
 * Sealing connection credentials (issue 6 item 1, design §11): AES-256-GCM under the keyring's
 * newest master key, a fresh random 12-byte nonce per sealing, and associated data that binds the
 * key id, the workspace and the connection lookup. A sealed value moved to another connection or
 * workspace, or re-labelled with another key id, fails to open; so does any changed byte. Pure
 * (node:crypto only): no storage, no I/O.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/** One 32-byte master key and its id (the first 8 hex digits of the key's SHA-256). */
export interface MasterKey {
  readonly id: string
  readonly key: Buffer
}

/**
 * The master keys this process knows: the newest seals, any opens. Implementations MUST never
 * expose key bytes other than through `current()` and `find()` (no logging, no serialising).
 */
export interface MasterKeyring {
  /** The key new sealings use (the newest). */
  current(): MasterKey
  /** The key with this id, or undefined when this process does not hold it. */
  find(id: string): MasterKey | undefined
  /** Ids of every key held, newest first. */
  ids(): readonly string[]
}

/** What the store keeps: nothing here is secret without the master key. */
export interface SealedCredential {
  readonly keyId: string
  readonly nonce: Buffer
  readonly ciphertext: Buffer
  readonly tag: Buffer
}

const NONCE_BYTES = 12
const TAG_BYTES = 16
const AAD_LABEL = 'provenant/connection-credentials/v1'

/** Thrown when a sealed credential cannot be opened; the message never carries key material or values. */
export class CredentialDecryptError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CredentialDecryptError'
  }
}

/** The key id of a 32-byte key: first 8 hex digits of its SHA-256 (not reversible, stable). */
export function masterKeyId(key: Buffer): string {
  if (key.length !== 32) throw new RangeError(`a master key is 32 bytes, not ${key.length}`)
  return createHash('sha256').update(key).digest('hex').slice(0, 8)
}

/** Associated data: label, key id, workspace and lookup, each length-prefixed so no two tuples collide. */
export function associatedData(keyId: string, workspaceId: string, lookup: string): Buffer {
  const parts = [AAD_LABEL, keyId, workspaceId, lookup].map((p) => Buffer.from(p, 'utf8'))
  const out: Buffer[] = []
  for (const part of parts) {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(part.length)
    out.push(length, part)
  }
  return Buffer.concat(out)
}

export function sealCredential(key: MasterKey, workspaceId: string, lookup: string, plaintext: Buffer): SealedCredential {
  const nonce = randomBytes(NONCE_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key.key, nonce, { authTagLength: TAG_BYTES })
  cipher.setAAD(associatedData(key.id, workspaceId, lookup))
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return { keyId: key.id, nonce, ciphertext, tag: cipher.getAuthTag() }
}

export function openCredential(keyring: MasterKeyring, workspaceId: string, lookup: string, sealed: SealedCredential): Buffer {
  const key = keyring.find(sealed.keyId)
  if (!key)
    throw new CredentialDecryptError(
      `credentials of connection ${lookup} are sealed under master key ${sealed.keyId}, which this server does not hold (see "Connection credentials" in the README)`,
    )
  if (sealed.nonce.length !== NONCE_BYTES || sealed.tag.length !== TAG_BYTES)
    throw new CredentialDecryptError(`credentials of connection ${lookup} are damaged (bad nonce or tag length)`)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, sealed.nonce, { authTagLength: TAG_BYTES })
    decipher.setAAD(associatedData(sealed.keyId, workspaceId, lookup))
    decipher.setAuthTag(sealed.tag)
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()])
  } catch {
    throw new CredentialDecryptError(
      `credentials of connection ${lookup} failed authentication (altered, or stored for another connection)`,
    )
  }
}

/** Seals a record of values (as JSON). */
export function sealValues(
  key: MasterKey,
  workspaceId: string,
  lookup: string,
  values: Readonly<Record<string, string>>,
): SealedCredential {
  const plaintext = Buffer.from(JSON.stringify(values), 'utf8')
  try {
    return sealCredential(key, workspaceId, lookup, plaintext)
  } finally {
    plaintext.fill(0)
  }
}

export function openValues(keyring: MasterKeyring, workspaceId: string, lookup: string, sealed: SealedCredential): Record<string, string> {
  const plaintext = openCredential(keyring, workspaceId, lookup, sealed)
  try {
    const parsed = JSON.parse(plaintext.toString('utf8')) as unknown
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new CredentialDecryptError(`credentials of connection ${lookup} are not a record`)
    const out: Record<string, string> = Object.create(null) as Record<string, string>
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v
    return out
  } finally {
    plaintext.fill(0)
  }
}

/** A keyring over fixed keys (newest first): tests and the environment-variable keyring. */
export function staticKeyring(keys: readonly Buffer[]): MasterKeyring {
  if (keys.length === 0) throw new RangeError('a keyring needs at least one key')
  const list = keys.map((key) => ({ id: masterKeyId(key), key }))
  return {
    current: () => list[0]!,
    find: (id) => list.find((k) => k.id === id),
    ids: () => list.map((k) => k.id),
  }
}
