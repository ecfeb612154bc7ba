import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createPartFile } from '../export-files/part-file.js'
import { loadDownloadUrlKey } from './download-url-key.js'

const dir = mkdtempSync(join(tmpdir(), 'provenant-key-'))
after(() => rmSync(dir, { recursive: true, force: true }))

describe('loadDownloadUrlKey', () => {
  it('creates one 32-byte key file (0600) and every later load, in any process, reads the same key', () => {
    const exportDir = join(dir, 'exports')
    const first = loadDownloadUrlKey(exportDir, undefined)
    assert.equal(first.length, 32)
    assert.equal(statSync(join(exportDir, '.download-url-key')).mode & 0o777, 0o600)
    assert.deepEqual(loadDownloadUrlKey(exportDir, undefined), first)
  })

  it('takes a configured key in hex or base64, and refuses one shorter than 32 bytes', () => {
    const key = randomBytes(32)
    assert.deepEqual(loadDownloadUrlKey(dir, key.toString('hex')), key)
    assert.deepEqual(loadDownloadUrlKey(dir, key.toString('base64')), key)
    assert.throws(() => loadDownloadUrlKey(dir, randomBytes(16).toString('hex')), /at least 32 bytes/)
  })

  it('refuses a damaged key file with a message saying what to do', () => {
    const exportDir = join(dir, 'damaged')
    loadDownloadUrlKey(exportDir, undefined)
    writeFileSync(join(exportDir, '.download-url-key'), 'short')
    assert.throws(() => loadDownloadUrlKey(exportDir, undefined), /delete it to make a new one/)
  })
})

describe('createPartFile', () => {
  it('streams text to disk and reports its size and SHA-256', async () => {
    const path = join(dir, 'a.part')
    const part = await createPartFile(path)
    const chunks = ['héllo,', 'x'.repeat(300_000), '\r\n']
    for (const chunk of chunks) await part.write(chunk)
    const facts = await part.finish()
    const bytes = readFileSync(path)
    assert.equal(facts.sizeBytes, bytes.length)
    assert.equal(facts.sha256, createHash('sha256').update(bytes).digest('hex'))
    assert.equal(bytes.toString('utf8'), chunks.join(''))
  })

  it('abort deletes the file; an existing file is never overwritten', async () => {
    const path = join(dir, 'b.part')
    const part = await createPartFile(path)
    await part.write('partial')
    await part.abort()
    assert.throws(() => statSync(path), /ENOENT/)
    writeFileSync(path, "someone else's")
    await assert.rejects(createPartFile(path), /EEXIST/)
  })
})
