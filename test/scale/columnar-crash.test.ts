/**
 * Crash safety of the columnar tier's compactor (issue 16 item 4; docs/design/columnar.md): a
 * compactor process is killed with SIGKILL mid-segment (file written, not renamed or recorded) and
 * mid-manifest (inside the manifest transaction, before commit), on each backend. After the kills
 * the manifest and watermark are unchanged, the leftover files are found as orphans and removed,
 * and once compaction completes every row is counted exactly once; the staging files the killed
 * compactors left are removed once old. The same for a merge of small segments killed while
 * writing the merged file, inside the manifest swap and after it. The file writes and the
 * mid-segment / mid-merge-file failpoints run in the compactor's worker thread, as in the server.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { type ColumnarStore, createColumnarStore } from '../../src/adapters/columnar/columnar-store.js'
import { MERGE_FAN_IN } from '../../src/adapters/columnar/compaction-policy.js'
import { createPgPool, createPostgresDb } from '../../src/adapters/postgres/postgres-db.js'
import { migrate } from '../../src/adapters/sql/migrate.js'
import { MIGRATIONS } from '../../src/adapters/sql/migrations/index.js'
import { quoteIdent, type SqlDb } from '../../src/adapters/sql/sql-db.js'
import { createSqliteDb, openSqliteDatabase } from '../../src/adapters/sqlite/sqlite-db.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'
import { compileQuery, toWireRows } from '../../src/kql/index.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/backends.js'

const CHILD = fileURLToPath(new URL('../support/columnar-compact-child.ts', import.meta.url))
const ROWS = 500
const TABLE: ConnectionTable = {
  workspaceId: 'w1',
  lookup: 'readings',
  sqlName: 'data_w1_crash',
  columns: [
    { name: 'timestamp', type: 'datetime' },
    { name: 'sensor', type: 'string' },
  ] as ConnectionTable['columns'],
}

function runChild(
  target: string,
  dir: string,
  failpoint?: string,
  mode?: 'merge',
): Promise<{ signal: NodeJS.Signals | null; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, target, dir, JSON.stringify(TABLE), ...(mode ? [mode] : [])], {
      env: { ...process.env, ...(failpoint ? { PROVENANT_FAILPOINT: failpoint } : {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => resolve({ code, signal }))
  })
}

async function insertRows(db: SqlDb, from: number, count: number): Promise<void> {
  await db.transaction(async (tx) => {
    for (let i = from; i < from + count; i++)
      await tx.run(`INSERT INTO ${quoteIdent(TABLE.sqlName)} VALUES (?, ?, ?, ?)`, [
        i,
        1,
        17_000_000_000_000_000 + ((i * 37) % ROWS) * 10_000_000,
        `s${i % 7}`,
      ])
  })
}

for (const backend of BACKENDS) {
  describe(`columnar compactor killed with SIGKILL on ${backend}`, () => {
    let dir: string
    let db: SqlDb
    let target: string
    let database: TestDatabase | undefined
    let duck: DuckDBInstance
    /** The surviving process's store: checks after each kill, and finishes what the killed one left. */
    let store: ColumnarStore
    let segmentsDir: string

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'provenant-columnar-crash-'))
      if (backend === 'sqlite') {
        target = join(dir, 'provenant.db')
        db = createSqliteDb(openSqliteDatabase(target))
      } else {
        database = await createTestDatabase()
        target = database.url
        db = createPostgresDb(createPgPool(target))
      }
      await migrate(db, MIGRATIONS)
      const defs = TABLE.columns.map((c) => `${quoteIdent(c.name)} ${db.engine.columnTypes[c.type]}`)
      await db.exec(
        `CREATE TABLE ${quoteIdent(TABLE.sqlName)} (_rowid BIGINT PRIMARY KEY, _ingested_at BIGINT NOT NULL, ${defs.join(', ')})`,
      )
      await insertRows(db, 1, ROWS)
      duck = await DuckDBInstance.create(':memory:', { threads: '1' })
      segmentsDir = join(dir, 'segments')
      // as the child: rows are read and segments written by the compactor's worker thread
      const rowStore = backend === 'sqlite' ? { sqliteFile: target } : { postgresUrl: target }
      store = createColumnarStore(db, duck, { dir: segmentsDir, segmentRows: 200, retireDelayMs: 0, ...rowStore })
    })

    after(async () => {
      await store.close()
      duck.closeSync()
      await db.close()
      await database?.drop()
      rmSync(dir, { recursive: true, force: true })
    })

    it('a kill mid-segment or mid-manifest records nothing; orphans are removed; every row is then counted once', async () => {
      for (const failpoint of ['columnar-mid-segment', 'columnar-mid-manifest']) {
        const exit = await runChild(target, segmentsDir, failpoint)
        assert.equal(exit.signal, 'SIGKILL', `${failpoint}: the compactor was killed (exit ${exit.code})`)
        assert.equal(await store.watermark(TABLE.sqlName), 0, `${failpoint}: the watermark did not move`)
        assert.deepEqual(await store.segments(), [], `${failpoint}: no manifest row`)
      }
      const tableDir = join(segmentsDir, TABLE.sqlName)
      assert.equal(readdirSync(tableDir).length, 2, 'a temporary file (mid-segment) and an unrecorded segment (mid-manifest) were left')
      const report = await store.check()
      assert.equal(report.orphans.length, 2)
      // the staging file (a CSV copy of rows above the watermark) the kill mid-segment left is
      // removed once an hour old (a younger one may be a running export's); mid-manifest, the
      // segment was written and its staging file deleted
      const stagingDir = join(segmentsDir, '.staging')
      const leftStaged = readdirSync(stagingDir)
      assert.equal(leftStaged.length, 1, 'the staging file of the compactor killed mid-segment')
      const hourAgo = new Date(Date.now() - 3_600_000)
      for (const f of leftStaged) utimesSync(join(stagingDir, f), hourAgo, hourAgo)
      const removed = await store.removeOrphans()
      assert.equal(removed.length, 3)
      assert.ok(removed.every((f) => !existsSync(f)))

      // a complete compaction by a process that is not killed, then the rest in-process
      const exit = await runChild(target, segmentsDir)
      assert.equal(exit.code, 0)
      while (await store.compact(TABLE)) {}
      assert.deepEqual(await store.check(), { missing: [], orphans: [], mismatched: [] })
      assert.equal(await store.watermark(TABLE.sqlName), ROWS)

      await assertCountedOnce(ROWS)
    })

    it('a kill mid-merge (file, manifest swap, after the swap) loses and duplicates nothing; orphans are removed', async () => {
      // eight small segments (MERGE_FAN_IN, < 200 / 2 rows each) to merge
      for (let batch = 0; batch < MERGE_FAN_IN; batch++) {
        await insertRows(db, ROWS + batch * 10 + 1, 10)
        assert.equal((await store.compact(TABLE))?.segment.rowCount, 10)
      }
      const total = ROWS + 10 * MERGE_FAN_IN
      const before = await store.segments(TABLE.sqlName)
      for (const failpoint of ['columnar-mid-merge-file', 'columnar-mid-merge']) {
        const exit = await runChild(target, segmentsDir, failpoint, 'merge')
        assert.equal(exit.signal, 'SIGKILL', `${failpoint}: the merger was killed (exit ${exit.code})`)
        assert.deepEqual(await store.segments(TABLE.sqlName), before, `${failpoint}: the manifest is unchanged`)
        await assertCountedOnce(total)
      }
      const exit = await runChild(target, segmentsDir, 'columnar-merge-committed', 'merge')
      assert.equal(exit.signal, 'SIGKILL')
      const after = await store.segments(TABLE.sqlName)
      assert.equal(after.length, before.length - MERGE_FAN_IN + 1, 'eight small segments became one')
      assert.deepEqual(after.at(-1)?.rowCount, 10 * MERGE_FAN_IN)
      await assertCountedOnce(total)
      // left behind: the temp file, the unrecorded merged file, the eight replaced files
      const report = await store.check()
      assert.equal(report.orphans.length, 2 + MERGE_FAN_IN)
      assert.deepEqual([report.missing, report.mismatched], [[], []])
      await store.removeOrphans()
      assert.deepEqual(await store.check(), { missing: [], orphans: [], mismatched: [] })
      assert.equal(await store.merge(TABLE), undefined, 'nothing left to merge')
      await assertCountedOnce(total)
    })

    async function assertCountedOnce(rows: number): Promise<void> {
      const source = await store.openQuerySource([TABLE])
      try {
        const schema = {
          tables: [
            { name: 'T', columns: TABLE.columns, hiddenColumns: [{ name: '_rowid', type: 'long' as const }], sqlName: TABLE.sqlName },
          ],
        }
        const r = toWireRows(
          await compileQuery('T | summarize n = count(), d = dcount(_rowid), lo = min(_rowid), hi = max(_rowid)', schema, {
            dialect: 'duckdb',
          }).execute(source, { now: 0n, rowCap: 10 }),
        )
        assert.deepEqual(r.results, [{ n: rows, d: rows, lo: 1, hi: rows }])
      } finally {
        source.close()
      }
    }
  })
}
