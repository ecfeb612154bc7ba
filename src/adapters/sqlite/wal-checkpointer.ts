/**
 * @module
 * WAL checkpoints off the event loop. With SQLite's automatic checkpoint, the COMMIT that crosses
 * 1,000 WAL pages copies them into the database file and, at `synchronous = NORMAL`, fsyncs the WAL
 * and then the database file, all on the event loop: every request waits behind two fsyncs, which
 * on a slow disk take tens of milliseconds (the ledger-append bench measured 4-8% of its
 * throughput there). The writer therefore runs with `wal_autocheckpoint = 0` and a worker thread
 * with a connection of its own runs `PRAGMA wal_checkpoint(PASSIVE)` every few hundred
 * milliseconds: PASSIVE never waits for the writer or a reader, copies what no open snapshot still
 * needs, and the writer rewinds the WAL once a checkpoint has copied all of it, so the file stays
 * bounded as before. Crash safety is SQLite's own whichever connection checkpoints. If the worker
 * stops, the writer takes the automatic checkpoint back (`onStop`), so the WAL never grows unbounded.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** How often the worker checkpoints; SQLite's default threshold of 1,000 pages is about 4 MB. */
export const CHECKPOINT_INTERVAL_MS = 250

export interface WalCheckpointer {
  /** Stops the worker after one last checkpoint. */
  stop(): Promise<void>
}

// Plain CommonJS for an eval worker (no TypeScript loader needed, from source or built).
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
db.pragma('busy_timeout = 1000')
db.pragma('synchronous = NORMAL')
const checkpoint = () => { try { db.pragma('wal_checkpoint(PASSIVE)') } catch {} }
const timer = setInterval(checkpoint, workerData.intervalMs)
parentPort.on('message', (message) => {
  if (message !== 'stop') return
  clearInterval(timer)
  checkpoint()
  db.close()
  parentPort.close()
})
`

export function startWalCheckpointer(file: string, onStop: () => void): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, intervalMs: CHECKPOINT_INTERVAL_MS } })
  // a server's or CLI's exit never waits for it
  worker.unref()
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  let stopping = false
  void exited.then(() => {
    if (!stopping) onStop()
  })
  worker.on('error', () => {})
  return {
    async stop() {
      stopping = true
      // held until it has exited: an unreferenced worker would let the process end mid-stop
      worker.ref()
      worker.postMessage('stop')
      await exited
    },
  }
}
