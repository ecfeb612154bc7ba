import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { createDownloadSigner } from './download-signature.js'

describe('download URL signatures', () => {
  const signer = createDownloadSigner(randomBytes(32))
  const expiresAt = Date.parse('2026-01-01T00:15:00Z')
  const signature = signer.sign('exp_abc', expiresAt)

  it('verifies its own signature until the expiry, and says expired from the expiry on', () => {
    assert.match(signature, /^[A-Za-z0-9_-]{43}$/)
    assert.equal(signer.verify('exp_abc', String(expiresAt), signature, expiresAt - 1), 'valid')
    assert.equal(signer.verify('exp_abc', String(expiresAt), signature, expiresAt), 'expired')
    assert.equal(signer.verify('exp_abc', String(expiresAt), signature, expiresAt + 60_000), 'expired')
  })

  it('refuses any altered part: id, expiry (also non-canonical spellings), signature, or a missing one', () => {
    const cases: [string, unknown, unknown][] = [
      ['exp_abd', String(expiresAt), signature],
      ['exp_abc', String(expiresAt + 1), signature],
      ['exp_abc', `0${expiresAt}`, signature],
      ['exp_abc', `${expiresAt}.0`, signature],
      ['exp_abc', String(expiresAt), signature.slice(0, -1)],
      ['exp_abc', String(expiresAt), `${signature}A`],
      ['exp_abc', undefined, signature],
      ['exp_abc', String(expiresAt), undefined],
      ['exp_abc', [String(expiresAt)], signature],
    ]
    for (const [id, expires, sig] of cases)
      assert.equal(signer.verify(id, expires, sig, expiresAt - 1), 'altered', `${id} ${String(expires)} ${String(sig)}`)
  })

  it('refuses every other spelling of the last character (its two unused bits)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const others = [...alphabet].filter((c) => c !== signature.at(-1)).map((c) => signature.slice(0, -1) + c)
    for (const other of others) assert.equal(signer.verify('exp_abc', String(expiresAt), other, 0), 'altered')
  })

  it('a signature of another key does not verify', () => {
    const other = createDownloadSigner(randomBytes(32)).sign('exp_abc', expiresAt)
    assert.equal(signer.verify('exp_abc', String(expiresAt), other, 0), 'altered')
  })

  it('refuses short keys', () => {
    assert.throws(() => createDownloadSigner(randomBytes(16)), /32 bytes/)
  })
})
