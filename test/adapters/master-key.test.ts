/**
 * Master keys of connection credentials (design §11): the environment variable or a 0600 key file
 * made at first start; clear start-up errors for a wrong length or a loosely protected file.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import {
  addKeyToFile,
  loadMasterKeyring,
  MasterKeyError,
  masterKeyFileOf,
  retireOldKeysInFile,
} from '../../src/adapters/keys/master-key.js'
import { masterKeyId, openValues, sealValues } from '../../src/domain/credentials/credential-cipher.js'
import { scrub } from '../../src/shared/secret-scrubber.js'

describe('master keys (design §11)', () => {
  const dirs: string[] = []
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'provenant-mk-'))
    dirs.push(d)
    return d
  }
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  it('creates <data>/master.key with mode 0600 at first start and reads the same key afterwards', () => {
    const dir = fresh()
    const first = loadMasterKeyring({ dataDir: dir, env: {} })
    const file = masterKeyFileOf(dir)
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.deepEqual(first.source, { kind: 'file', path: file })
    const again = loadMasterKeyring({ dataDir: dir, env: {} })
    assert.equal(again.current().id, first.current().id)
    assert.equal(readFileSync(file, 'utf8').trim().length, 44)
  })

  it('refuses a key file readable by group or others, telling to chmod 600', () => {
    const dir = fresh()
    loadMasterKeyring({ dataDir: dir, env: {} })
    chmodSync(masterKeyFileOf(dir), 0o640)
    assert.throws(
      () => loadMasterKeyring({ dataDir: dir, env: {} }),
      (e: unknown) => e instanceof MasterKeyError && /chmod 600/.test(e.message) && /0640/.test(e.message),
    )
  })

  it('takes PROVENANT_MASTER_KEY as base64 or hex, with older keys from PROVENANT_MASTER_KEY_PREVIOUS, and makes no file', () => {
    const dir = fresh()
    const key = randomBytes(32)
    const old = randomBytes(32)
    for (const text of [key.toString('base64'), key.toString('hex'), ` ${key.toString('hex').toUpperCase()}\n`]) {
      const ring = loadMasterKeyring({
        dataDir: dir,
        env: { PROVENANT_MASTER_KEY: text, PROVENANT_MASTER_KEY_PREVIOUS: old.toString('base64') },
      })
      assert.equal(ring.current().id, masterKeyId(key))
      assert.deepEqual(ring.ids(), [masterKeyId(key), masterKeyId(old)])
      assert.deepEqual(ring.source, { kind: 'env' })
    }
    assert.equal(
      scrub(`env PROVENANT_MASTER_KEY=${key.toString('base64')} old=${old.toString('hex')}`),
      'env PROVENANT_MASTER_KEY=[REDACTED] old=[REDACTED]',
    )
    assert.throws(() => statSync(masterKeyFileOf(dir)))
  })

  it('refuses a key of the wrong length or encoding with a clear message and no key material', () => {
    const short = randomBytes(16).toString('base64')
    for (const text of [short, 'not a key!', randomBytes(33).toString('hex')]) {
      assert.throws(
        () => loadMasterKeyring({ dataDir: fresh(), env: { PROVENANT_MASTER_KEY: text } }),
        (e: unknown) =>
          e instanceof MasterKeyError && /PROVENANT_MASTER_KEY must be 32 bytes/.test(e.message) && !e.message.includes(text.trim()),
      )
    }
    assert.throws(
      () =>
        loadMasterKeyring({
          dataDir: fresh(),
          env: { PROVENANT_MASTER_KEY: randomBytes(32).toString('hex'), PROVENANT_MASTER_KEY_PREVIOUS: short },
        }),
      /PROVENANT_MASTER_KEY_PREVIOUS/,
    )
  })

  it('a running keyring sees a key added to the file by another process; retiring keeps only the newest', () => {
    const dir = fresh()
    const ring = loadMasterKeyring({ dataDir: dir, env: {} })
    const before = ring.current()
    const sealed = sealValues(before, 'ws', 'c', { password: 'old-key-secret' })
    const added = addKeyToFile(masterKeyFileOf(dir))
    assert.equal(statSync(masterKeyFileOf(dir)).mode & 0o777, 0o600)
    assert.equal(ring.current().id, added.id)
    assert.deepEqual(ring.ids(), [added.id, before.id])
    assert.equal(openValues(ring, 'ws', 'c', sealed)['password'], 'old-key-secret')
    assert.deepEqual(retireOldKeysInFile(masterKeyFileOf(dir)), [before.id])
    assert.deepEqual(loadMasterKeyring({ dataDir: dir, env: {} }).ids(), [added.id])
  })
})
