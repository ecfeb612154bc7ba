import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  cosign,
  cosignatureVerifierFor,
  createNoteSigner,
  exportSigningKeyPem,
  formatPrivateNoteKey,
  formatVerifierKey,
  generateSigningKey,
  importSigningKey,
  isValidKeyName,
  NoteError,
  type NoteErrorCode,
  type NoteVerifierKey,
  noteKeyId,
  openNote,
  parseVerifierKey,
  rawPublicKey,
  rawSeed,
  signNote,
} from './signed-note.js'

// golang.org/x/mod sumdb/note/note_test.go known answers.
const PETER_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz'
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop'
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
const PETER_SIG = '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n'
const ENOCH_SIG = '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n'

const peter = parseVerifierKey(PETER_VKEY)
const enoch = parseVerifierKey(ENOCH_VKEY)

function throwsNote(fn: () => unknown, code: NoteErrorCode, message?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof NoteError, String(e))
    assert.equal(e.code, code, e.message)
    if (message) assert.match(e.message, message)
    return true
  })
}

describe('signed-note keys', () => {
  it('reproduces the Go test key: key ID c74f20a3 and the verifier key', () => {
    const { key, name } = importSigningKey(PETER_SKEY)
    assert.equal(name, 'PeterNeumann')
    const signer = createNoteSigner('PeterNeumann', key)
    assert.equal(signer.keyId, 0xc74f20a3)
    assert.equal(signer.vkey, PETER_VKEY)
    assert.equal(formatPrivateNoteKey('PeterNeumann', key), PETER_SKEY)
    assert.equal(peter.keyId, 0xc74f20a3)
    assert.equal(noteKeyId('PeterNeumann', 0x01, peter.publicKey), 0xc74f20a3)
  })

  it('refuses every truncation and single-character mangling of the vkey (Go TestNewVerifier)', () => {
    for (let i = 0; i <= PETER_VKEY.length; i++) {
      for (let j = i + 1; j <= PETER_VKEY.length; j++) {
        if (i === 0 && j === PETER_VKEY.length) continue
        throwsNote(() => parseVerifierKey(PETER_VKEY.slice(i, j)), 'malformed-key')
      }
    }
    for (let i = 0; i < PETER_VKEY.length; i++) {
      const mangled = PETER_VKEY.slice(0, i) + String.fromCharCode(PETER_VKEY.charCodeAt(i) + 1) + PETER_VKEY.slice(i + 1)
      throwsNote(() => parseVerifierKey(mangled), 'malformed-key')
    }
    throwsNote(
      () => parseVerifierKey('PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY=='),
      'malformed-key',
      /not base64|32 bytes/,
    )
    throwsNote(
      () => parseVerifierKey('PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'),
      'malformed-key',
      /unsupported signature type 0x65/,
    )
  })

  it('refuses every truncation and mangling of the signer key (Go TestNewSigner)', () => {
    for (let i = 0; i <= PETER_SKEY.length; i++) {
      for (let j = i + 1; j <= PETER_SKEY.length; j++) {
        if (i === 0 && j === PETER_SKEY.length) continue
        assert.throws(() => importSigningKey(PETER_SKEY.slice(i, j)), `${PETER_SKEY.slice(i, j)}`)
      }
    }
    for (let i = 0; i < PETER_SKEY.length; i++) {
      const mangled = PETER_SKEY.slice(0, i) + String.fromCharCode(PETER_SKEY.charCodeAt(i) + 1) + PETER_SKEY.slice(i + 1)
      assert.throws(() => importSigningKey(mangled), mangled)
    }
  })

  it('generates keys that round-trip through PKCS#8 PEM and Go skey, with a matching vkey', () => {
    const key = generateSigningKey()
    const pem = exportSigningKeyPem(key)
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/)
    const again = importSigningKey(pem).key
    assert.deepEqual(rawSeed(again), rawSeed(key))
    const der = key.export({ format: 'der', type: 'pkcs8' })
    assert.deepEqual(rawPublicKey(importSigningKey(der).key), rawPublicKey(key))
    const skey = formatPrivateNoteKey('EnochRoot', key)
    assert.deepEqual(rawSeed(importSigningKey(skey).key), rawSeed(key))
    const signer = createNoteSigner('EnochRoot', key)
    const v = parseVerifierKey(signer.vkey)
    const note = signNote('hi\n', [signer])
    assert.equal(openNote(note, [v]).verified[0]!.name, 'EnochRoot')
    throwsNote(() => importSigningKey('-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n'), 'malformed-key')
  })

  it('key names: non-empty, no spaces, no plus', () => {
    assert.ok(isValidKeyName('example.com/log'))
    for (const bad of ['', 'a b', 'a+b', 'a\tb', 'a\u00a0b', 'a\u2003b']) assert.ok(!isValidKeyName(bad), bad)
    throwsNote(() => formatVerifierKey('a b', peter.publicKey), 'malformed-key')
  })
})

describe('signed-note sign and open (Go TestSign / TestOpen vectors)', () => {
  const signer = createNoteSigner('PeterNeumann', importSigningKey(PETER_SKEY).key)

  it('signs the Go text to the exact Go signature line', () => {
    assert.equal(signNote(TEXT, [signer]), `${TEXT}\n${PETER_SIG}`)
  })

  it('refuses text without a final newline or with control characters', () => {
    throwsNote(() => signNote('abc', [signer]), 'malformed-note')
    throwsNote(() => signNote('a\u0001b\n', [signer]), 'malformed-note', /U\+0001/)
    throwsNote(() => signNote('a\n', []), 'malformed-note', /at least one signature/)
  })

  it('one known and one unknown signature: the known one verifies, the unknown is kept aside', () => {
    const n = openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, [peter])
    assert.equal(n.text, TEXT)
    assert.deepEqual(
      n.verified.map((s) => [s.name, s.keyId]),
      [['PeterNeumann', 0xc74f20a3]],
    )
    assert.deepEqual(
      n.unverified.map((s) => [s.name, s.keyId]),
      [['EnochRoot', 0xaf0cfe78]],
    )
  })

  it('both known: both verify', () => {
    const n = openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, [peter, enoch])
    assert.deepEqual(
      n.verified.map((s) => s.name),
      ['PeterNeumann', 'EnochRoot'],
    )
    assert.equal(n.unverified.length, 0)
  })

  it('no known key: rejected, naming the unknown signers', () => {
    throwsNote(
      () => openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, []),
      'no-known-signature',
      /^note has no verifiable signatures \(signed only by unknown keys: PeterNeumann\+c74f20a3, EnochRoot\+af0cfe78\)$/,
    )
  })

  it('two different known keys with the same name and ID are ambiguous; an unused or identical duplicate is not', () => {
    const impostor: NoteVerifierKey = { ...enoch, vkey: `${enoch.vkey}x`, publicKey: peter.publicKey, key: peter.key }
    throwsNote(() => openNote(`${TEXT}\n${ENOCH_SIG}`, [enoch, peter, impostor]), 'ambiguous-key', /^ambiguous key EnochRoot\+af0cfe78$/)
    assert.equal(openNote(`${TEXT}\n${PETER_SIG}`, [enoch, peter, impostor]).verified.length, 1)
    assert.equal(openNote(`${TEXT}\n${ENOCH_SIG}`, [enoch, enoch]).verified.length, 1)
  })

  it('more than 100 signatures: malformed, known or not', () => {
    throwsNote(() => openNote(`${TEXT}\n${PETER_SIG.repeat(101)}`, [peter]), 'malformed-note', /more than 100/)
    throwsNote(() => openNote(`${TEXT}\n${PETER_SIG.repeat(101)}`, []), 'malformed-note', /more than 100/)
    assert.equal(openNote(`${TEXT}\n${PETER_SIG.repeat(100)}`, [peter]).verified.length, 1)
  })

  it('a known key whose signature does not verify rejects the whole note', () => {
    throwsNote(
      () => openNote(`${TEXT}\n${PETER_SIG.slice(0, 60)}ABCD${PETER_SIG.slice(60)}`, [peter]),
      'invalid-signature',
      /^invalid signature for key PeterNeumann\+c74f20a3$/,
    )
    const otherText = TEXT.replace('problem', 'problems')
    throwsNote(() => openNote(`${otherText}\n${PETER_SIG}`, [peter]), 'invalid-signature')
  })

  it('duplicated verified and unverified signatures are dropped', () => {
    const enochABCD = `${ENOCH_SIG.slice(0, 60)}ABCD${ENOCH_SIG.slice(60)}`
    const n = openNote(`${TEXT}\n${PETER_SIG}${PETER_SIG}${ENOCH_SIG}${ENOCH_SIG}${enochABCD}`, [peter])
    assert.equal(n.verified.length, 1)
    assert.equal(n.unverified.length, 2)
    assert.ok(n.unverified[1]!.base64.includes('ABCD'))
  })

  it('malformed notes (Go badMsgs)', () => {
    const bad: (string | Uint8Array)[] = [
      TEXT,
      `${TEXT}\n`,
      `${TEXT}\n${PETER_SIG.slice(0, -1)}`,
      `\u0001${TEXT}\n${PETER_SIG}`,
      Buffer.concat([Buffer.from([0xff]), Buffer.from(`${TEXT}\n${PETER_SIG}`)]),
      `${TEXT}\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`,
      `${TEXT}\n${PETER_SIG}Unexpected line.\n`,
      `${TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM\n`, // unpadded
      `${TEXT}\n— PeterNeumann AAAA\n`, // shorter than key ID + 1 byte
      `${TEXT}\n-- PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`,
    ]
    for (const msg of bad) throwsNote(() => openNote(msg, [peter]), 'malformed-note')
  })

  it('the text may contain blank lines: the last blank line separates the signatures', () => {
    const text = 'para 1\n\npara 2\n'
    const n = openNote(signNote(text, [signer]), [peter])
    assert.equal(n.text, text)
  })
})

describe('timestamped cosignature (tlog-cosignature type 0x04)', () => {
  const { key } = importSigningKey(PETER_SKEY)
  it('verifies with the 0x04 verifier derived from the same public key, and binds the time', () => {
    const body = 'example.com/log\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n'
    const co = cosign('PeterNeumann', key, body, 1_700_000_000)
    const note = signNote(body, [], [co])
    const v04 = cosignatureVerifierFor(peter)
    assert.equal(v04.type, 0x04)
    assert.notEqual(v04.keyId, peter.keyId)
    const n = openNote(note, [v04])
    assert.equal(n.verified[0]!.signature.readBigUInt64BE(0), 1_700_000_000n)
    // The plain 0x01 verifier does not recognise it: an unknown key, so the note is unverified.
    throwsNote(() => openNote(note, [peter]), 'no-known-signature')
    // Changing the time in the signature breaks it.
    const tampered = Buffer.from(co.signature)
    tampered.writeBigUInt64BE(1_700_000_001n, 0)
    throwsNote(() => openNote(signNote(body, [], [{ ...co, signature: tampered }]), [v04]), 'invalid-signature')
  })
})
