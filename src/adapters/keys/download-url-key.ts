/**
 * @module
 * The HMAC key of download URLs. Every process must hold the same key (any of them may serve a
 * download another one issued), so it lives with the files, in the export directory every process
 * shares (or comes from PROVENANT_DOWNLOAD_URL_KEY). It is created once, 0600, without a race
 * between processes starting at once (written aside, then linked into place; the loser reads the
 * winner's key). It never enters the database.
 */
import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const FILE = '.download-url-key'

/** `configured`: base64 or hex text of at least 32 bytes. */
export function loadDownloadUrlKey(exportDir: string, configured: string | undefined): Buffer {
  if (configured) {
    const key =
      /^[0-9a-fA-F]+$/.test(configured) && configured.length % 2 === 0 ? Buffer.from(configured, 'hex') : Buffer.from(configured, 'base64')
    if (key.length < 32) throw new Error('PROVENANT_DOWNLOAD_URL_KEY must hold at least 32 bytes (64 hex digits or 44 base64 characters)')
    return key
  }
  mkdirSync(exportDir, { recursive: true, mode: 0o700 })
  const file = join(exportDir, FILE)
  try {
    return readKey(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  writeFileSync(aside, randomBytes(32).toString('base64'), { mode: 0o600 })
  try {
    linkSync(aside, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    rmSync(aside, { force: true })
  }
  return readKey(file)
}

function readKey(file: string): Buffer {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')
  if (key.length < 32)
    throw new Error(
      `${file} does not hold a download URL key of 32 bytes; delete it to make a new one (outstanding download links stop working)`,
    )
  return key
}
