/**
 * @module
 * Durability without blocking the event loop (design §8, §12). The connection runs WAL with
 * `synchronous = NORMAL`: COMMIT writes the transaction's frames to the WAL file (page cache) and
 * returns at once, and SQLite still syncs the WAL before every checkpoint and the database after it.
 * Before a write is acknowledged, `durable()` fsyncs the WAL file on libuv's thread pool, so an
 * acknowledged commit is on disk exactly as with `synchronous = FULL`, while the event loop keeps
 * serving requests and the next transaction commits during the fsync. Concurrent waiters share
 * fsyncs: one fsync covers every commit written before it started.
 *
 * fsync flushes the file (the inode), whichever descriptor names it, so our own read-only
 * descriptor of the WAL suffices. If the WAL file was replaced or removed (its inode changed:
 * the last connection closed and a new one recreated it), its earlier frames were checkpointed
 * into the database file, which SQLite synced; the descriptor is then reopened.
 */
import { closeSync, fstatSync, fsync, openSync, statSync } from 'node:fs'

export interface WalSync {
  /** Resolves when every commit made before this call is on disk. */
  durable(): Promise<void>
  close(): void
}

export function createWalSync(walPath: string): WalSync {
  let fd: number | undefined
  let committed = 0
  let synced = 0
  let running: Promise<void> | undefined

  function descriptor(): number | undefined {
    let current: ReturnType<typeof statSync> | undefined
    try {
      current = statSync(walPath)
    } catch {
      // No WAL file: nothing written since the last full checkpoint, which SQLite synced.
      return undefined
    }
    if (fd !== undefined && fstatSync(fd).ino !== current.ino) {
      closeSync(fd)
      fd = undefined
    }
    fd ??= openSync(walPath, 'r')
    return fd
  }

  function syncOnce(): Promise<void> {
    const target = committed
    const handle = descriptor()
    if (handle === undefined) {
      synced = Math.max(synced, target)
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      fsync(handle, (error) => {
        if (error) return reject(error)
        synced = Math.max(synced, target)
        resolve()
      })
    })
  }

  return {
    async durable() {
      const mine = ++committed
      while (synced < mine) {
        running ??= syncOnce().finally(() => {
          running = undefined
        })
        await running
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    },
  }
}
