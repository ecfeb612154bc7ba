import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { CredentialDecryptError, masterKeyId, openValues, type SealedCredential, sealValues, staticKeyring } from './credential-cipher.js'

describe('credential cipher (AES-256-GCM, design §11)', () => {
  const k1 = randomBytes(32)
  const k2 = randomBytes(32)
  const ring = staticKeyring([k2, k1])
  const values = { user: 'reader', password: 'p@ss w0rd "quoted" ünïcode' }

  it('round-trips under the newest key, with the key id in clear and the values nowhere in the sealed form', () => {
    const sealed = sealValues(ring.current(), 'ws_1', 'plant-db', values)
    assert.equal(sealed.keyId, masterKeyId(k2))
    assert.match(sealed.keyId, /^[0-9a-f]{8}$/)
    assert.equal(sealed.nonce.length, 12)
    assert.equal(sealed.tag.length, 16)
    const all = Buffer.concat([sealed.nonce, sealed.ciphertext, sealed.tag])
    assert.equal(all.includes(Buffer.from('p@ss')), false)
    assert.deepEqual({ ...openValues(ring, 'ws_1', 'plant-db', sealed) }, values)
  })

  it('uses a fresh nonce for every sealing of the same values', () => {
    const a = sealValues(ring.current(), 'ws_1', 'c', values)
    const b = sealValues(ring.current(), 'ws_1', 'c', values)
    assert.notDeepEqual(a.nonce, b.nonce)
    assert.notDeepEqual(a.ciphertext, b.ciphertext)
  })

  it('opens values sealed under an older key of the keyring', () => {
    const old = staticKeyring([k1])
    const sealed = sealValues(old.current(), 'ws_1', 'c', values)
    assert.deepEqual({ ...openValues(ring, 'ws_1', 'c', sealed) }, values)
  })

  it('fails when any single byte of nonce, ciphertext or tag is changed', () => {
    const sealed = sealValues(ring.current(), 'ws_1', 'c', values)
    for (const part of ['nonce', 'ciphertext', 'tag'] as const) {
      for (let i = 0; i < sealed[part].length; i++) {
        const copy = Buffer.from(sealed[part])
        copy[i] = copy[i]! ^ 0x01
        const tampered: SealedCredential = { ...sealed, [part]: copy }
        assert.throws(() => openValues(ring, 'ws_1', 'c', tampered), CredentialDecryptError, `${part}[${i}]`)
      }
    }
  })

  it('fails when moved to another connection or workspace, or re-labelled with another key id', () => {
    const sealed = sealValues(staticKeyring([k1]).current(), 'ws_1', 'c', values)
    assert.throws(() => openValues(ring, 'ws_1', 'other', sealed), CredentialDecryptError)
    assert.throws(() => openValues(ring, 'ws_2', 'c', sealed), CredentialDecryptError)
    assert.throws(() => openValues(ring, 'ws_1', 'c', { ...sealed, keyId: masterKeyId(k2) }), CredentialDecryptError)
    // the same key bytes under a forged id are refused too (the id is bound in the associated data)
    const forged = { ...staticKeyring([k1]), find: () => ({ id: 'deadbeef', key: k1 }) }
    assert.throws(() => openValues(forged, 'ws_1', 'c', { ...sealed, keyId: 'deadbeef' }), CredentialDecryptError)
  })

  it('says which key is missing without any value or key material in the message', () => {
    const sealed = sealValues(staticKeyring([randomBytes(32)]).current(), 'ws_1', 'c', values)
    const error = (() => {
      try {
        openValues(ring, 'ws_1', 'c', sealed)
        return undefined
      } catch (e) {
        return e as Error
      }
    })()
    assert.ok(error instanceof CredentialDecryptError)
    assert.match(error.message, new RegExp(`master key ${sealed.keyId}`))
    assert.equal(error.message.includes('p@ss'), false)
  })

  it('refuses keys that are not 32 bytes', () => {
    assert.throws(() => masterKeyId(randomBytes(16)), RangeError)
    assert.throws(() => staticKeyring([]), RangeError)
  })
})
