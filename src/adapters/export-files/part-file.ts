/**
 * @module
 * A file written as a stream of text chunks with backpressure, hashed (SHA-256) and counted as it
 * goes, and flushed to disk (fsync before close) when finished: the staging form of every export
 * file.
 */
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'

export interface PartFile {
  write(text: string): Promise<void>
  /** Ends the stream, fsyncs and closes; the file is complete at `path` when this resolves. */
  finish(): Promise<{ readonly sizeBytes: number; readonly sha256: string }>
  /** Closes and deletes the file (idempotent; never throws). */
  abort(): Promise<void>
}

export async function createPartFile(path: string): Promise<PartFile> {
  const stream = createWriteStream(path, { flags: 'wx', mode: 0o600, flush: true, highWaterMark: 256 * 1024 })
  let failure: Error | undefined
  stream.on('error', (error) => {
    failure ??= error
  })
  await once(stream, 'open')
  const hash = createHash('sha256')
  let sizeBytes = 0
  return {
    async write(text) {
      if (failure) throw failure
      const bytes = Buffer.from(text, 'utf8')
      hash.update(bytes)
      sizeBytes += bytes.length
      if (!stream.write(bytes)) await once(stream, 'drain')
    },
    async finish() {
      if (failure) throw failure
      const closed = once(stream, 'close')
      stream.end()
      await closed
      if (failure) throw failure
      return { sizeBytes, sha256: hash.digest('hex') }
    },
    async abort() {
      if (!stream.destroyed) {
        const closed = once(stream, 'close').catch(() => {})
        stream.destroy()
        await closed
      }
      await rm(path, { force: true }).catch(() => {})
    },
  }
}
