/**
 * The row store's batch insert on each backend (ConnectionDataStore.insertRows over
 * `SqlDb.insertMany`: SQLite binds a cached statement of a few dozen rows, then the rest one at a
 * time; PostgreSQL streams COPY's text format). Every KQL type reads back exactly — longs at the
 * int64 limits, datetime ticks, NaN and ±Infinity, dynamic JSON with a long beyond 2^53, strings
 * with COPY's special characters, empty strings, nulls — and the row ids and ingestion time are
 * right in batches that end on, before and after the statement boundaries. A failed insert rolls
 * back and leaves the connection usable.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createPgPool, createPostgresDb } from '../../src/adapters/postgres/postgres-db.js'
import { migrate } from '../../src/adapters/sql/migrate.js'
import { MIGRATIONS } from '../../src/adapters/sql/migrations/index.js'
import { createSqlConfigStore } from '../../src/adapters/sql/sql-config-store.js'
import { createSqlConnectionDataStore } from '../../src/adapters/sql/sql-connection-data-store.js'
import type { SqlDb } from '../../src/adapters/sql/sql-db.js'
import { createSqliteDb, openSqliteDatabase } from '../../src/adapters/sqlite/sqlite-db.js'
import { type TypedRow, typeRows } from '../../src/domain/ingest/index.js'
import type { ConnectionTable } from '../../src/domain/workspace-config/config-store.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/backends.js'

const COLUMNS: ConnectionTable['columns'] = [
  { name: 'timestamp', type: 'datetime' },
  { name: 's', type: 'string' },
  { name: 'n', type: 'long' },
  { name: 'i', type: 'int' },
  { name: 'r', type: 'real' },
  { name: 'd', type: 'decimal' },
  { name: 'b', type: 'bool' },
  { name: 'span', type: 'timespan' },
  { name: 'g', type: 'guid' },
  { name: 'j', type: 'dynamic' },
]
const TABLE: ConnectionTable = { workspaceId: 'w1', lookup: 'probes', sqlName: 'data_w1_probes', columns: COLUMNS }

/** Rows as a push body carries them (bigints where the exact body parser makes them), typed as ingest types them. */
const SPECIAL: Record<string, unknown>[] = [
  {
    timestamp: '2026-01-01T00:00:00.0000001Z',
    s: '',
    n: '9223372036854775807',
    r: 'NaN',
    d: 'Infinity',
    b: true,
    j: { big: 9007199254740993n },
  },
  {
    timestamp: '1601-01-01T00:00:00Z',
    s: 'tab\there\nnewline\rreturn',
    n: '-9223372036854775808',
    r: 'Infinity',
    d: '-Infinity',
    b: false,
  },
  { timestamp: '9999-12-31T23:59:59.9999999Z', s: '\\N', n: 9007199254740993n, r: '-Infinity', i: 2147483647, span: '-00:00:00.0000001' },
  { timestamp: '2026-06-30T12:00:00Z', s: '\\.', n: -1, r: 5e-324, d: 1.7976931348623157e308, i: -2147483648, span: '10.00:00:00' },
  {
    timestamp: '2026-06-30T12:00:01Z',
    s: 'back\\slash "quoted" \\t',
    n: 0,
    r: 0.1 + 0.2,
    d: -1.5e-300,
    g: '74BE27DE-1e4e-49d9-b579-fe0b331d3642',
  },
  { timestamp: '2026-06-30T12:00:02Z', s: 'ünïcödé 🌍 NULL', j: 'a string\twith a tab and a \\ backslash' },
  { timestamp: '2026-06-30T12:00:03Z', s: null, n: null, i: null, r: null, d: null, b: null, span: null, g: null, j: null },
  { timestamp: '2026-06-30T12:00:04Z', s: ' ', j: [1, 'x', null, { nested: [true, 1.5, -0.25] }] },
]

function typed(inputs: readonly Record<string, unknown>[]): TypedRow[] {
  const { rows, problems } = typeRows(COLUMNS, inputs)
  assert.deepEqual(problems, [])
  return rows
}

/** `count` rows: the special ones first, then ordinary rows that say their position. */
function batch(count: number, seed: number): TypedRow[] {
  const inputs = Array.from({ length: count }, (_, k) =>
    k < SPECIAL.length
      ? SPECIAL[k]!
      : {
          timestamp: new Date(Date.UTC(2026, 0, 1) + (seed + k) * 1000).toISOString(),
          s: `row ${seed + k}`,
          n: seed * 1_000_003 + k,
          r: k / 7,
          b: k % 2 === 0,
          j: { k },
        },
  )
  return typed(inputs)
}

for (const backend of BACKENDS) {
  describe(`${backend}: batch insert into a connection table`, () => {
    let dir: string
    let db: SqlDb
    let database: TestDatabase | undefined
    const store = () => createSqlConnectionDataStore(db)

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'provenant-row-insert-'))
      if (backend === 'sqlite') db = createSqliteDb(openSqliteDatabase(join(dir, 'provenant.db')))
      else {
        database = await createTestDatabase()
        db = createPostgresDb(createPgPool(database.url))
      }
      await migrate(db, MIGRATIONS)
      await db.run('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)', ['w1', 'w1', 0])
      await createSqlConfigStore(db).createConnectionTable(TABLE)
    })
    after(async () => {
      await db.close()
      await database?.drop()
      rmSync(dir, { recursive: true, force: true })
    })

    it('reads back every value exactly, with consecutive row ids and each batch its ingestion time', async () => {
      // 10 + 2 columns: SQLite binds 21 rows a statement; sizes around and across that boundary
      const sizes = [1, 20, 21, 22, 42, 64, 2_600]
      const expected: { rowId: number; ingestedAt: number; values: TypedRow }[] = []
      let nextRowId = 1
      for (const [b, size] of sizes.entries()) {
        const rows = batch(size, b * 10_000)
        const ingestedAt = Date.UTC(2026, 10, 27, 9, 0, b)
        const ids = await store().insertRows(TABLE, rows, ingestedAt)
        assert.deepEqual(ids, { firstRowId: nextRowId, lastRowId: nextRowId + size - 1 })
        rows.forEach((values, k) => {
          expected.push({ rowId: nextRowId + k, ingestedAt, values })
        })
        nextRowId += size
      }
      const stored = await store().rowsAfter(TABLE, 0, 1_000_000)
      assert.equal(stored.length, expected.length)
      for (let k = 0; k < expected.length; k++) assert.deepStrictEqual(stored[k], expected[k], `row ${k + 1}`)
      assert.equal(await store().latestRowId('w1'), nextRowId - 1)
      // the special values, spelled out once (the comparison above is against typeRows' own output);
      // the second batch starts with every special row
      const special = stored.slice(1, 1 + SPECIAL.length).map((r) => r.values)
      assert.equal(special[0]![2], 9_223_372_036_854_775_807n)
      assert.ok(Number.isNaN(special[0]![4]))
      assert.equal(special[0]![5], Number.POSITIVE_INFINITY)
      assert.deepStrictEqual(special[0]![9], { big: 9_007_199_254_740_993n })
      assert.equal(special[1]![1], 'tab\there\nnewline\rreturn')
      assert.equal(special[1]![2], -9_223_372_036_854_775_808n)
      assert.equal(special[2]![1], '\\N')
      assert.deepStrictEqual(special[6]!.slice(1), ['', null, null, null, null, null, null, null, null])
    })

    it('rolls a failed insert back and keeps the connection usable', async () => {
      const before = await store().rowCount(TABLE)
      const columns = ['_rowid', '_ingested_at', 'timestamp', 's']
      // the second row repeats the first's row id: the statement (or COPY) fails and nothing stays
      const clash = [900_001, 1, 5n, 'kept?', 900_001, 1, 6n, 'clash']
      await assert.rejects(db.transaction((tx) => tx.insertMany(TABLE.sqlName, columns, clash)))
      assert.equal(await store().rowCount(TABLE), before)
      // a statement the engine refuses before any row (no such table)
      await assert.rejects(db.insertMany('no_such_table', columns, [900_003, 1, 8n, 'nowhere']))
      await db.insertMany(TABLE.sqlName, columns, [900_002, 1, 7n, 'after the failure'])
      assert.equal(await store().rowCount(TABLE), before + 1)
      const row = await store().row(TABLE, 900_002)
      assert.equal(row?.values[1], 'after the failure')
    })
  })
}
