/**
 * @module
 * C2SP signed-note (c2sp.org/signed-note) with Ed25519 from node:crypto, plus the Ed25519
 * timestamped cosignature of c2sp.org/tlog-cosignature (signature type 0x04) that carries a
 * checkpoint's time (see checkpoint.ts). Compatible with golang.org/x/mod/sumdb/note: its test
 * keys, signature lines and malformed-note cases are this module's test vectors.
 *
 *     note        = text (ends in "\n") ‖ "\n" ‖ 1..100 × ("— " name " " base64(keyID ‖ signature) "\n")
 *     key ID      = SHA-256(name ‖ 0x0A ‖ type ‖ 32-byte public key)[:4], big-endian uint32
 *     vkey        = name "+" hex8(key ID) "+" base64(type ‖ public key)
 *     skey        = "PRIVATE+KEY+" name "+" hex8(key ID) "+" base64(0x01 ‖ 32-byte seed)   (Go's format)
 *
 * Verification follows the spec's MUSTs: signatures from unknown keys are ignored (kept as
 * `unverified`), a known key's bad signature rejects the whole note, and a note with no verified
 * known signature is rejected. The signing key lives outside the database: keep it as PKCS#8 PEM
 * (or Go's skey string) in a 0600 file or the environment (design §8, §11).
 */

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign as edSign,
  verify as edVerify,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto'
import { isWellFormed } from '../../shared/text-rules.js'

/** Signature types used here (signed-note §Signature types). */
export const SIG_TYPE_ED25519 = 0x01
export const SIG_TYPE_COSIGNATURE_V1 = 0x04
export type SignatureType = typeof SIG_TYPE_ED25519 | typeof SIG_TYPE_COSIGNATURE_V1

/** golang.org/x/mod/sumdb/note refuses notes with more; C2SP requires accepting at least 16. */
export const MAX_SIGNATURES = 100

export type NoteErrorCode = 'malformed-note' | 'malformed-key' | 'invalid-signature' | 'no-known-signature' | 'ambiguous-key'

export class NoteError extends Error {
  readonly code: NoteErrorCode
  constructor(code: NoteErrorCode, message: string) {
    super(message)
    this.name = 'NoteError'
    this.code = code
  }
}

/** A public key that can verify note signatures of one type under one name. */
export interface NoteVerifierKey {
  readonly name: string
  readonly keyId: number
  readonly type: SignatureType
  /** The raw 32-byte Ed25519 public key. */
  readonly publicKey: Buffer
  /** The vkey string (name+hex8+base64(type‖key)). */
  readonly vkey: string
  readonly key: KeyObject
}

/** A key that signs notes (Ed25519, type 0x01) and, with the same key, timestamped cosignatures. */
export interface NoteSigner {
  readonly name: string
  readonly keyId: number
  readonly publicKey: Buffer
  /** The vkey of the type-0x01 key: what verifiers are configured with. */
  readonly vkey: string
  sign(message: Uint8Array): Buffer
}

export interface NoteSignature {
  readonly name: string
  readonly keyId: number
  /** The signature bytes after the 4-byte key ID. */
  readonly signature: Buffer
  /** The signature line's base64 field as written. */
  readonly base64: string
}

export interface OpenedNote {
  readonly text: string
  /** Signatures by known keys that verified, in note order (duplicates dropped). */
  readonly verified: readonly (NoteSignature & { readonly verifier: NoteVerifierKey })[]
  /** Signatures by keys not in the trusted list (ignored, kept for diagnostics). */
  readonly unverified: readonly NoteSignature[]
}

/** SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4] as a big-endian uint32. */
export function noteKeyId(name: string, type: number, publicKey: Uint8Array): number {
  const digest = createHash('sha256')
    .update(name, 'utf8')
    .update(Buffer.from([0x0a, type]))
    .update(publicKey)
    .digest()
  return digest.readUInt32BE(0)
}

/** Key names are non-empty and contain no Unicode spaces and no "+" (signed-note §Format). */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s\u0085+]/u.test(name) && isWellFormed(name)
}

const hex8 = (n: number): string => n.toString(16).padStart(8, '0')

// --- keys -----------------------------------------------------------------------------------------

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

/** Ed25519 public KeyObject from its raw 32 bytes. */
export function ed25519PublicKeyFromRaw(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new NoteError('malformed-key', `an Ed25519 public key is 32 bytes, got ${raw.length}`)
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' })
}

/** Ed25519 private KeyObject from its raw 32-byte seed. */
export function ed25519PrivateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new NoteError('malformed-key', `an Ed25519 seed is 32 bytes, got ${seed.length}`)
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' })
}

/** The raw 32-byte public key of an Ed25519 KeyObject (public or private). */
export function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key
  if (pub.asymmetricKeyType !== 'ed25519')
    throw new NoteError('malformed-key', `expected an Ed25519 key, got ${pub.asymmetricKeyType ?? key.type}`)
  const der = pub.export({ format: 'der', type: 'spki' })
  return Buffer.from(der.subarray(der.length - 32))
}

/** The raw 32-byte seed of an Ed25519 private KeyObject. */
export function rawSeed(key: KeyObject): Buffer {
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ed25519') throw new NoteError('malformed-key', 'expected an Ed25519 private key')
  const der = key.export({ format: 'der', type: 'pkcs8' })
  return Buffer.from(der.subarray(der.length - 32))
}

/** A fresh Ed25519 signing key. */
export function generateSigningKey(): KeyObject {
  return generateKeyPairSync('ed25519').privateKey
}

/** PKCS#8 PEM text of a signing key, for a 0600 key file outside the database. */
export function exportSigningKeyPem(key: KeyObject): string {
  rawSeed(key) // type check
  return key.export({ format: 'pem', type: 'pkcs8' }).toString()
}

/**
 * Reads a signing key from PKCS#8 PEM, PKCS#8 DER, or Go's `PRIVATE+KEY+name+hash+base64` skey.
 * For an skey, the embedded name and key hash are checked against the derived public key.
 */
export function importSigningKey(input: string | Uint8Array): { key: KeyObject; name: string | null } {
  if (typeof input === 'string' && input.startsWith('PRIVATE+KEY+')) {
    const parsed = parsePrivateNoteKey(input)
    return { key: parsed.key, name: parsed.name }
  }
  let key: KeyObject
  try {
    key =
      typeof input === 'string'
        ? createPrivateKey({ key: input, format: 'pem' })
        : createPrivateKey({ key: Buffer.from(input), format: 'der', type: 'pkcs8' })
  } catch (err) {
    throw new NoteError('malformed-key', `not a PKCS#8 private key: ${(err as Error).message}`)
  }
  rawSeed(key)
  return { key, name: null }
}

/** Go's signer key string for `name` (compatible with golang.org/x/mod/sumdb/note NewSigner). */
export function formatPrivateNoteKey(name: string, key: KeyObject): string {
  if (!isValidKeyName(name)) throw new NoteError('malformed-key', `invalid key name ${JSON.stringify(name)}`)
  const id = noteKeyId(name, SIG_TYPE_ED25519, rawPublicKey(key))
  return `PRIVATE+KEY+${name}+${hex8(id)}+${Buffer.concat([Buffer.from([SIG_TYPE_ED25519]), rawSeed(key)]).toString('base64')}`
}

function parsePrivateNoteKey(skey: string): { key: KeyObject; name: string } {
  const parts = chop(skey, 4)
  const bad = (): never => {
    throw new NoteError('malformed-key', 'malformed signer key: expected PRIVATE+KEY+<name>+<8 hex>+<base64(0x01 ‖ seed)>')
  }
  if (parts === null || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') bad()
  const [, , name, hash, b64] = parts!
  if (!isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(hash)) bad()
  const raw = decodeBase64Strict(b64)
  if (raw === null || raw.length !== 33 || raw[0] !== SIG_TYPE_ED25519) bad()
  const key = ed25519PrivateKeyFromSeed(raw!.subarray(1))
  if (noteKeyId(name, SIG_TYPE_ED25519, rawPublicKey(key)) !== parseInt(hash, 16)) {
    throw new NoteError('malformed-key', `signer key hash ${hash} does not match its key`)
  }
  return { key, name }
}

/** The vkey string for a name, signature type and raw public key. */
export function formatVerifierKey(name: string, publicKey: Uint8Array, type: SignatureType = SIG_TYPE_ED25519): string {
  if (!isValidKeyName(name)) throw new NoteError('malformed-key', `invalid key name ${JSON.stringify(name)}`)
  const id = noteKeyId(name, type, publicKey)
  return `${name}+${hex8(id)}+${Buffer.concat([Buffer.from([type]), publicKey]).toString('base64')}`
}

/** Parses and checks a vkey (types 0x01 and 0x04; any other type is refused). */
export function parseVerifierKey(vkey: string): NoteVerifierKey {
  const parts = chop(vkey, 2)
  const bad = (why: string): never => {
    throw new NoteError(
      'malformed-key',
      `malformed verifier key ${JSON.stringify(vkey.length > 80 ? `${vkey.slice(0, 77)}...` : vkey)}: ${why}`,
    )
  }
  if (parts === null) bad('expected <name>+<8 hex>+<base64(type ‖ key)>')
  const [name, hash, b64] = parts!
  if (!isValidKeyName(name)) bad('invalid key name')
  if (!/^[0-9a-f]{8}$/.test(hash)) bad('the key hash must be 8 lowercase hex digits')
  const raw = decodeBase64Strict(b64)
  if (raw === null || raw.length < 1) bad('the key is not base64')
  const type = raw![0]!
  if (type !== SIG_TYPE_ED25519 && type !== SIG_TYPE_COSIGNATURE_V1)
    bad(`unsupported signature type 0x${type.toString(16).padStart(2, '0')}`)
  const publicKey = Buffer.from(raw!.subarray(1))
  if (publicKey.length !== 32) bad(`an Ed25519 key is 32 bytes, got ${publicKey.length}`)
  const keyId = noteKeyId(name, type, publicKey)
  if (keyId !== parseInt(hash, 16)) bad('the key hash does not match the key')
  return { name, keyId, type: type as SignatureType, publicKey, vkey, key: ed25519PublicKeyFromRaw(publicKey) }
}

/** The type-0x04 (timestamped cosignature) verifier for the same name and public key. */
export function cosignatureVerifierFor(key: NoteVerifierKey): NoteVerifierKey {
  if (key.type === SIG_TYPE_COSIGNATURE_V1) return key
  let verifier = cosignatureVerifiers.get(key)
  if (verifier === undefined) {
    verifier = parseVerifierKey(formatVerifierKey(key.name, key.publicKey, SIG_TYPE_COSIGNATURE_V1))
    cosignatureVerifiers.set(key, verifier)
  }
  return verifier
}

// Deriving a verifier builds a public key object, which costs more than the signature check it
// serves; a server opens checkpoints against the same trusted keys again and again.
const cosignatureVerifiers = new WeakMap<NoteVerifierKey, NoteVerifierKey>()

/** A note signer from a private key and a key name. */
export function createNoteSigner(name: string, key: KeyObject): NoteSigner {
  if (!isValidKeyName(name)) throw new NoteError('malformed-key', `invalid key name ${JSON.stringify(name)}`)
  const publicKey = rawPublicKey(key)
  rawSeed(key)
  return {
    name,
    keyId: noteKeyId(name, SIG_TYPE_ED25519, publicKey),
    publicKey,
    vkey: formatVerifierKey(name, publicKey),
    sign: (message) => edSign(null, message, key),
  }
}

// --- notes ----------------------------------------------------------------------------------------

/** A signature line to append, already computed (for cosignatures and Go's re-signing rules). */
export interface PreparedSignature {
  readonly name: string
  readonly keyId: number
  readonly signature: Uint8Array
}

/**
 * Signs `text` (which must end in a newline and obey the note character rules) with each signer,
 * and appends any prepared signatures after them. Returns the whole note.
 */
export function signNote(text: string, signers: readonly NoteSigner[], prepared: readonly PreparedSignature[] = []): string {
  checkNoteText(text)
  const bytes = Buffer.from(text, 'utf8')
  let out = `${text}\n`
  const lines = [...signers.map((s) => ({ name: s.name, keyId: s.keyId, signature: s.sign(bytes) })), ...prepared]
  if (lines.length === 0) throw new NoteError('malformed-note', 'a note needs at least one signature')
  for (const l of lines) {
    if (!isValidKeyName(l.name)) throw new NoteError('malformed-note', `invalid key name ${JSON.stringify(l.name)}`)
    const id = Buffer.alloc(4)
    id.writeUInt32BE(l.keyId)
    out += `— ${l.name} ${Buffer.concat([id, l.signature]).toString('base64')}\n`
  }
  return out
}

function checkNoteText(text: string): void {
  if (!text.endsWith('\n')) throw new NoteError('malformed-note', 'note text must end with a newline')
  checkNoteCharacters(text)
}

function checkNoteCharacters(s: string): void {
  if (!isWellFormed(s)) throw new NoteError('malformed-note', 'a note must be valid UTF-8 (it contains a lone surrogate)')
  // eslint-disable-next-line no-control-regex
  const bad = /[\u0000-\u0009\u000b-\u001f]/.exec(s)
  if (bad) {
    throw new NoteError(
      'malformed-note',
      `a note must not contain control characters other than newline (found U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()} at ${bad.index})`,
    )
  }
}

/**
 * Parses a note and verifies its signatures against `known` keys. Throws NoteError:
 * `malformed-note` (syntax), `ambiguous-key` (two known keys share name and ID), `invalid-signature`
 * (a known key's signature does not verify: the whole note is rejected) or `no-known-signature`
 * (nothing verified; unknown keys alone never make a note valid).
 */
export function openNote(note: string | Uint8Array, known: readonly NoteVerifierKey[]): OpenedNote {
  let msg: string
  if (typeof note === 'string') msg = note
  else {
    try {
      msg = new TextDecoder('utf-8', { fatal: true }).decode(note)
    } catch {
      throw new NoteError('malformed-note', 'a note must be valid UTF-8')
    }
  }
  checkNoteCharacters(msg)
  const split = msg.lastIndexOf('\n\n')
  if (split < 0) throw new NoteError('malformed-note', 'malformed note: no blank line before the signatures')
  const text = msg.slice(0, split + 1)
  let sigs = msg.slice(split + 2)
  if (sigs.length === 0 || !sigs.endsWith('\n'))
    throw new NoteError('malformed-note', 'malformed note: the signature block must end with a newline')

  const verified: (NoteSignature & { verifier: NoteVerifierKey })[] = []
  const unverified: NoteSignature[] = []
  const seenKnown = new Set<string>()
  const seenUnknown = new Set<string>()
  const textBytes = Buffer.from(text, 'utf8')
  let count = 0
  while (sigs.length > 0) {
    const nl = sigs.indexOf('\n')
    const line = sigs.slice(0, nl)
    sigs = sigs.slice(nl + 1)
    if (!line.startsWith('— '))
      throw new NoteError('malformed-note', `malformed note: unexpected line ${JSON.stringify(line.slice(0, 40))} in the signature block`)
    const rest = line.slice(2)
    const sp = rest.indexOf(' ')
    const name = sp < 0 ? rest : rest.slice(0, sp)
    const b64 = sp < 0 ? '' : rest.slice(sp + 1)
    const raw = decodeBase64Strict(b64)
    if (!isValidKeyName(name) || b64 === '' || raw === null || raw.length < 5) {
      throw new NoteError('malformed-note', `malformed note: bad signature line for ${JSON.stringify(name)}`)
    }
    if (++count > MAX_SIGNATURES) throw new NoteError('malformed-note', `malformed note: more than ${MAX_SIGNATURES} signatures`)
    const keyId = raw.readUInt32BE(0)
    const sig: NoteSignature = { name, keyId, signature: Buffer.from(raw.subarray(4)), base64: b64 }
    const matches = known.filter((k) => k.name === name && k.keyId === keyId)
    if (matches.length === 0) {
      if (!seenUnknown.has(line)) {
        seenUnknown.add(line)
        unverified.push(sig)
      }
      continue
    }
    if (matches.length > 1 && new Set(matches.map((m) => m.vkey)).size > 1) {
      throw new NoteError('ambiguous-key', `ambiguous key ${name}+${hex8(keyId)}`)
    }
    const id = `${name}+${hex8(keyId)}`
    if (seenKnown.has(id)) continue
    seenKnown.add(id)
    const verifier = matches[0]!
    if (!verifySignature(verifier, textBytes, sig.signature)) {
      throw new NoteError('invalid-signature', `invalid signature for key ${id}`)
    }
    verified.push({ ...sig, verifier })
  }
  if (verified.length === 0) {
    const names = unverified.map((u) => `${u.name}+${hex8(u.keyId)}`).join(', ')
    throw new NoteError('no-known-signature', `note has no verifiable signatures${names ? ` (signed only by unknown keys: ${names})` : ''}`)
  }
  return { text, verified, unverified }
}

function verifySignature(v: NoteVerifierKey, text: Buffer, signature: Buffer): boolean {
  if (v.type === SIG_TYPE_ED25519) return signature.length === 64 && edVerify(null, text, v.key, signature)
  // Timestamped cosignature: u64 timestamp ‖ Ed25519 over "cosignature/v1\ntime T\n" ‖ text.
  if (signature.length !== 72) return false
  const t = signature.readBigUInt64BE(0)
  if (t > 2n ** 63n - 1n) return false
  return edVerify(null, cosignatureMessage(t, text), v.key, signature.subarray(8))
}

/** The message a tlog-cosignature/v1 Ed25519 signature covers. */
export function cosignatureMessage(timestamp: bigint | number, text: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`cosignature/v1\ntime ${BigInt(timestamp).toString()}\n`, 'utf8'), text])
}

/** A timestamped cosignature (type 0x04) of `text` by `key` at `timestamp` (POSIX seconds). */
export function cosign(name: string, key: KeyObject, text: string, timestamp: number): PreparedSignature {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new RangeError(`cosignature time must be non-negative whole seconds, got ${timestamp}`)
  const t = Buffer.alloc(8)
  t.writeBigUInt64BE(BigInt(timestamp))
  const sig = edSign(null, cosignatureMessage(timestamp, Buffer.from(text, 'utf8')), key)
  return { name, keyId: cosignatureKeyId(name, key), signature: Buffer.concat([t, sig]) }
}

// Exporting the public key costs more than the signature; a checkpoint is cosigned per batch.
const cosignKeyIds = new WeakMap<KeyObject, Map<string, number>>()

function cosignatureKeyId(name: string, key: KeyObject): number {
  let byName = cosignKeyIds.get(key)
  if (byName === undefined) {
    byName = new Map()
    cosignKeyIds.set(key, byName)
  }
  let id = byName.get(name)
  if (id === undefined) {
    id = noteKeyId(name, SIG_TYPE_COSIGNATURE_V1, rawPublicKey(key))
    byName.set(name, id)
  }
  return id
}

// --- helpers --------------------------------------------------------------------------------------

/** Splits at the first `count` "+" signs (base64 may itself contain "+"); null if there are fewer. */
function chop(s: string, count: 2): [string, string, string] | null
function chop(s: string, count: 4): [string, string, string, string, string] | null
function chop(s: string, count: number): string[] | null {
  const out: string[] = []
  let rest = s
  for (let i = 0; i < count; i++) {
    const at = rest.indexOf('+')
    if (at < 0) return null
    out.push(rest.slice(0, at))
    rest = rest.slice(at + 1)
  }
  out.push(rest)
  return out
}

/** RFC 4648 §4 base64 with padding, nothing else (Node's decoder silently skips junk). */
export function decodeBase64Strict(s: string): Buffer | null {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null
  const b = Buffer.from(s, 'base64')
  return b.toString('base64') === s ? b : null
}
