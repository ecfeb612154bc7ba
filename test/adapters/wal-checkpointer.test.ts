/**
 * The SQLite writer's WAL checkpoints run in a worker thread (src/adapters/sqlite/wal-checkpointer.ts):
 * the writer's automatic checkpoint is off, yet the WAL stays bounded under sustained writes, every
 * committed row is in the database once it is closed and opened again, and closing stops the worker.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createSqliteDb, openSqliteDatabase } from '../../src/adapters/sqlite/sqlite-db.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('sqlite: WAL checkpoints off the event loop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-test-wal-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('keeps the WAL bounded under sustained writes with the automatic checkpoint off, and loses no row', async () => {
    const file = join(dir, 'wal.db')
    const raw = openSqliteDatabase(file)
    const db = createSqliteDb(raw)
    assert.equal(raw.pragma('wal_autocheckpoint', { simple: true }), 0, "the writer's own checkpoint is off")
    await db.run('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)')
    const body = 'x'.repeat(1000)
    const TRANSACTIONS = 120
    const ROWS = 250 // about 30 MB written in all
    let largestWal = 0
    for (let t = 0; t < TRANSACTIONS; t++) {
      await db.transaction(async (tx) => {
        for (let r = 0; r < ROWS; r++) await tx.run('INSERT INTO t (body) VALUES (?)', [body])
      })
      largestWal = Math.max(largestWal, statSync(`${file}-wal`).size)
      if (t % 10 === 9) await sleep(300) // a checkpoint interval between bursts
    }
    const written = TRANSACTIONS * ROWS * body.length
    assert.ok(largestWal < written / 3, `the WAL reached ${largestWal} bytes of ${written} written: nothing checkpointed it`)
    await db.close()
    const again = createSqliteDb(openSqliteDatabase(file))
    assert.deepEqual(await again.get('SELECT count(*) AS n FROM t'), { n: TRANSACTIONS * ROWS })
    await again.close()
  })
})
