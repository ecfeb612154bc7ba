/**
 * The columnar tier's segment store on each backend (docs/design/columnar.md): compaction into
 * Parquet segments, the tail read from the row store, corrections applied at read time, a column
 * added after segments were written, orphan files, and KQL answers equal to the row store's.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../../../test/support/backends.js'
import type { ConnectionTable } from '../../domain/workspace-config/config-store.js'
import { compileQuery, type KqlSchema, type SqlSource, toWireRows } from '../../kql/index.js'
import { createPgPool, createPostgresDb } from '../postgres/postgres-db.js'
import { createSqliteQuerySource, registerKqlFunctions } from '../query-workers/query-source.js'
import { encodeValue } from '../sql/column-codec.js'
import { migrate } from '../sql/migrate.js'
import { MIGRATIONS } from '../sql/migrations/index.js'
import { createSqlConnectionDataStore } from '../sql/sql-connection-data-store.js'
import { quoteIdent, type SqlDb } from '../sql/sql-db.js'
import { createSqliteDb, openSqliteDatabase } from '../sqlite/sqlite-db.js'
import { type ColumnarStore, createColumnarStore } from './columnar-store.js'
import { MERGE_FAN_IN } from './compaction-policy.js'

const HOUR = 36_000_000_000n
const T0 = 17_000_000_000_000_000n
const SENSORS = ['s1', 's2', 'S3', 'kelvin \u212A', 'line1 error']

function tableOf(columns: ConnectionTable['columns']): ConnectionTable {
  return { workspaceId: 'w1', lookup: 'readings', sqlName: 'data_w1_readings', columns }
}
const BASE_COLUMNS = [
  { name: 'timestamp', type: 'datetime' },
  { name: 'sensor', type: 'string' },
  { name: 'value', type: 'real' },
  { name: 'n', type: 'long' },
] as ConnectionTable['columns']

async function insert(db: SqlDb, table: ConnectionTable, from: number, count: number): Promise<void> {
  const names = ['_rowid', '_ingested_at', ...table.columns.map((c) => quoteIdent(c.name))]
  for (let i = from; i < from + count; i++) {
    // timestamps out of row-id order: segments sort by timestamp
    const values: Record<string, unknown> = {
      timestamp: T0 + BigInt((i * 7919) % 500) * HOUR,
      sensor: SENSORS[i % SENSORS.length],
      value: i % 11 === 0 ? null : (i % 13) / 4,
      n: i % 17 === 0 ? null : 1_000_000_007 * (i % 3) - 5,
      site: `site-${i % 3}`,
    }
    await db.run(
      `INSERT INTO ${quoteIdent(table.sqlName)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
      [
        i,
        encodeValue(db.engine, 'datetime', T0 + BigInt(i)),
        ...table.columns.map((c) => encodeValue(db.engine, c.type, (values[c.name] ?? null) as never)),
      ].map((v) => (typeof v === 'bigint' && !db.engine.bindsBigints ? String(v) : v)),
    )
  }
}

const QUERIES = [
  'Readings | count',
  'Readings | summarize c = count(), s = sum(n), a = avg(value), mx = max(timestamp) by sensor | sort by sensor asc',
  'Readings | where sensor has "error" or sensor contains "k" | summarize count() by bin(timestamp, 1d) | sort by timestamp asc',
  'Readings | where value > 1.5 | top 5 by timestamp desc, _rowid asc | project _rowid, timestamp, sensor, value, n',
  'Readings | summarize dcount(sensor), min(_ingested_at)',
]

for (const backend of BACKENDS) {
  describe(`columnar store on ${backend}`, () => {
    let dir: string
    let db: SqlDb
    let rowSource: SqlSource & { close?: () => void }
    let database: TestDatabase | undefined
    let duck: DuckDBInstance
    let store: ColumnarStore
    let table = tableOf(BASE_COLUMNS)

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'provenant-columnar-'))
      if (backend === 'sqlite') {
        const file = join(dir, 'provenant.db')
        db = createSqliteDb(openSqliteDatabase(file))
        await migrate(db, MIGRATIONS)
        const reader = openSqliteDatabase(file)
        registerKqlFunctions(reader)
        rowSource = { ...createSqliteQuerySource(reader), close: () => reader.close() }
      } else {
        database = await createTestDatabase()
        db = createPostgresDb(createPgPool(database.url))
        await migrate(db, MIGRATIONS)
      }
      const defs = table.columns.map((c) => `${quoteIdent(c.name)} ${db.engine.columnTypes[c.type]}`)
      await db.exec(
        `CREATE TABLE ${quoteIdent(table.sqlName)} (_rowid BIGINT PRIMARY KEY, _ingested_at BIGINT NOT NULL, ${defs.join(', ')})`,
      )
      duck = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB' })
      store = createColumnarStore(db, duck, { dir: join(dir, 'segments'), segmentRows: 300, retireDelayMs: 0, ...rowStore() })
    })

    // rows read by the compactor's worker thread over a connection of its own, as in the server
    const rowStore = () => (backend === 'sqlite' ? { sqliteFile: join(dir, 'provenant.db') } : { postgresUrl: database!.url })

    after(async () => {
      await store.close()
      rowSource?.close?.()
      duck.closeSync()
      await db.close()
      await database?.drop()
      rmSync(dir, { recursive: true, force: true })
    })

    const schema = (): KqlSchema => ({
      tables: [
        {
          name: 'Readings',
          columns: table.columns.map((c) => ({ name: c.name, type: c.type })),
          hiddenColumns: [
            { name: '_rowid', type: 'long' },
            { name: '_ingested_at', type: 'datetime' },
          ],
          sqlName: table.sqlName,
        },
      ],
    })

    /** The row store's answers (in memory over whole-table reads) against the columnar tier's (pushed into DuckDB). */
    async function assertSameAnswers(what: string): Promise<void> {
      const columnar = await store.openQuerySource([table])
      try {
        for (const q of QUERIES) {
          const reference = compileQuery(q, schema(), { dialect: 'sqlite', pushdown: false })
          const expected = toWireRows(
            await reference.execute(backend === 'sqlite' ? rowSource : columnarRowStore(db), { now: T0, rowCap: 10_000 }),
          )
          const got = toWireRows(await compileQuery(q, schema(), { dialect: 'duckdb' }).execute(columnar, { now: T0, rowCap: 10_000 }))
          assert.deepEqual(got, expected, `${what}: ${q}`)
        }
      } finally {
        columnar.close()
      }
    }

    it('compacts in segments of at most segmentRows, sorted by timestamp; the tail stays visible', async () => {
      await insert(db, table, 1, 250)
      const staged = await store.stage(table)
      assert.equal(staged.rows, 250, 'staged: the rows so far')
      assert.equal(typeof staged.oldestIngestedAt, 'number')
      await insert(db, table, 251, 450)
      assert.equal((await store.stage(table)).rows, 300, 'staged: topped up to segmentRows, no more')
      const first = await store.compact(table)
      assert.equal(first?.segment.rowCount, 300)
      assert.deepEqual([first?.segment.minRowId, first?.segment.maxRowId], [1, 300])
      await store.compact(table)
      assert.equal(await store.watermark(table.sqlName), 600)
      const segments = await store.segments(table.sqlName)
      assert.deepEqual(
        segments.map((s) => [s.minRowId, s.maxRowId]),
        [
          [1, 300],
          [301, 600],
        ],
      )
      assert.ok(segments[0]!.minTimestamp! <= segments[0]!.maxTimestamp!)
      // rows 601..700 are the tail: read from the row store
      await assertSameAnswers('two segments + tail')
      await insert(db, table, 701, 5)
      await assertSameAnswers('rows acknowledged after the last compaction')
    })

    it('a correction applied in place changes columnar answers at once', async () => {
      const data = createSqlConnectionDataStore(db)
      assert.ok(await data.updateRow(table, 42, new Map([['value', 1000.5]])))
      assert.ok(await data.updateRow(table, 650, new Map([['sensor', 'corrected']])))
      await assertSameAnswers('after corrections')
      const columnar = await store.openQuerySource([table])
      try {
        const r = toWireRows(
          await compileQuery('Readings | where _rowid == 42 | project value', schema(), { dialect: 'duckdb' }).execute(columnar, {
            now: T0,
            rowCap: 10,
          }),
        )
        assert.deepEqual(r.results, [{ value: 1000.5 }], 'exactly one row 42, with the corrected value')
      } finally {
        columnar.close()
      }
    })

    it('a column added after segments were written reads as null (or "") from them', async () => {
      await db.exec(`ALTER TABLE ${quoteIdent(table.sqlName)} ADD COLUMN "site" ${db.engine.columnTypes['string']}`)
      table = tableOf([...BASE_COLUMNS, { name: 'site', type: 'string' }] as ConnectionTable['columns'])
      await insert(db, table, 706, 300)
      await store.compact(table)
      await store.compact(table)
      await assertSameAnswers('old segments without the new column')
      const columnar = await store.openQuerySource([table])
      try {
        const r = toWireRows(
          await compileQuery('Readings | summarize count() by site | sort by site asc', schema(), { dialect: 'duckdb' }).execute(columnar, {
            now: T0,
            rowCap: 10,
          }),
        )
        assert.equal(r.results[0]!['site'], '')
      } finally {
        columnar.close()
      }
    })

    it('eight small adjacent segments merge into one with the same answers (size-tiered); the replaced files go', async () => {
      const first = (await store.segments(table.sqlName)).length
      const last = await store.watermark(table.sqlName)
      for (let batch = 0; batch < MERGE_FAN_IN; batch++) {
        await insert(db, table, last + 1 + batch * 10, 10)
        await store.compact(table)
        if (batch === MERGE_FAN_IN - 2) assert.equal(await store.merge(table), undefined, 'seven small segments wait for an eighth')
      }
      const before = await store.segments(table.sqlName)
      assert.equal(before.length, first + MERGE_FAN_IN)
      await assertSameAnswers('eight small segments')
      const merged = await store.merge(table)
      assert.deepEqual(
        merged?.replaced.map((s) => s.id),
        before.slice(-MERGE_FAN_IN).map((s) => s.id),
      )
      const rows = 10 * MERGE_FAN_IN
      assert.deepEqual([merged?.segment.rowCount, merged?.segment.minRowId, merged?.segment.maxRowId], [rows, last + 1, last + rows])
      const after = await store.segments(table.sqlName)
      assert.deepEqual(
        after.map((s) => s.id),
        [...before.slice(0, -MERGE_FAN_IN).map((s) => s.id), merged!.segment.id],
      )
      await assertSameAnswers('after the merge')
      assert.equal(await store.merge(table), undefined, 'nothing left to merge')
      assert.deepEqual(await store.check(), { missing: [], orphans: [], mismatched: [] }, 'the replaced files were deleted')
    })

    it('a staged tail is staged again when its file is gone, another compactor moved the watermark or a column was added', async () => {
      const segmentsDir = join(dir, 'segments')
      const mark = await store.watermark(table.sqlName)
      await insert(db, table, mark + 1, 30)
      assert.equal((await store.stage(table)).rows, 30)
      // its file deleted (a removeOrphans elsewhere): staged again from the watermark, not appended to
      for (const f of readdirSync(join(segmentsDir, '.staging'))) rmSync(join(segmentsDir, '.staging', f))
      assert.equal((await store.stage(table)).rows, 30)

      // another compactor (the CLI's) compacts those rows first: this one's staged copy is stale
      const other = createColumnarStore(db, duck, { dir: segmentsDir, segmentRows: 300, retireDelayMs: 0, ...rowStore() })
      try {
        assert.equal((await other.compact(table))?.segment.rowCount, 30)
      } finally {
        await other.close()
      }
      await insert(db, table, mark + 31, 10)
      const next = await store.compact(table)
      assert.deepEqual([next?.segment.minRowId, next?.segment.maxRowId, next?.segment.rowCount], [mark + 31, mark + 40, 10])

      // a column added after rows were staged: they are staged again with it
      await insert(db, table, mark + 41, 5)
      assert.equal((await store.stage(table)).rows, 5)
      await db.exec(`ALTER TABLE ${quoteIdent(table.sqlName)} ADD COLUMN "unit" ${db.engine.columnTypes['string']}`)
      table = tableOf([...table.columns, { name: 'unit', type: 'string' }] as ConnectionTable['columns'])
      await insert(db, table, mark + 46, 5)
      const withUnit = await store.compact(table)
      assert.equal(withUnit?.segment.rowCount, 10)
      assert.ok(withUnit?.segment.columns.some((c) => c.name === 'unit'))
      await assertSameAnswers('after staging again')
      assert.deepEqual(readdirSync(join(segmentsDir, '.staging')), [], 'no staging file left')
    })

    it('queries running while segments are written and merged count every row once', async () => {
      const busy = tableOf(BASE_COLUMNS)
      const concurrent = { ...busy, lookup: 'concurrent', sqlName: 'data_w1_concurrent' }
      const defs = concurrent.columns.map((c) => `${quoteIdent(c.name)} ${db.engine.columnTypes[c.type]}`)
      await db.exec(
        `CREATE TABLE ${quoteIdent(concurrent.sqlName)} (_rowid BIGINT PRIMARY KEY, _ingested_at BIGINT NOT NULL, ${defs.join(', ')})`,
      )
      const ROWS = 200
      await db.transaction((tx) => insert(tx, concurrent, 1, ROWS))
      const segmentsDir = join(dir, 'segments')
      // one compactor writes segments of 10 rows; another (segments of 1,000: those are small)
      // merges them eight at a time, its replaced files kept for queries already reading them
      const writer = createColumnarStore(db, duck, { dir: segmentsDir, segmentRows: 10, retireDelayMs: 0, ...rowStore() })
      const merger = createColumnarStore(db, duck, { dir: segmentsDir, segmentRows: 1_000, ...rowStore() })
      const schemaOf = {
        tables: [
          {
            name: 'C',
            columns: concurrent.columns,
            hiddenColumns: [{ name: '_rowid', type: 'long' as const }],
            sqlName: concurrent.sqlName,
          },
        ],
      }
      const query = compileQuery('C | summarize n = count(), d = dcount(_rowid), lo = min(_rowid), hi = max(_rowid)', schemaOf, {
        dialect: 'duckdb',
      })
      let done = false
      let queries = 0
      const reader = (async () => {
        while (!done || queries < 3) {
          const source = await store.openQuerySource([concurrent])
          try {
            assert.deepEqual(toWireRows(await query.execute(source, { now: T0, rowCap: 10 })).results, [
              { n: ROWS, d: ROWS, lo: 1, hi: ROWS },
            ])
          } finally {
            source.close()
          }
          queries++
        }
      })()
      try {
        while (await writer.compact(concurrent)) {
          await merger.merge(concurrent)
        }
        while (await merger.merge(concurrent)) {}
      } finally {
        done = true
        await reader
        await writer.close()
        await merger.close()
      }
      const sizes = (await store.segments(concurrent.sqlName)).map((s) => s.rowCount)
      // 8 × 10 → 80; then 80 + 8 × 10 → 160 (the 80 is half of it); four of 10 wait for more
      assert.deepEqual(sizes, [160, 10, 10, 10, 10], 'twenty segments of 10, merged as they came')
      assert.ok(queries >= 3)
      // the seventeen replaced files, kept for queries that opened their views before the swaps
      assert.equal((await store.removeOrphans()).length, 8 + 9)
    })

    it('every KQL type moves into a segment exactly (64-bit edges, NaN, ±Infinity, null, dynamic text, guid)', async () => {
      const typed = {
        workspaceId: 'w1',
        lookup: 'types',
        sqlName: 'data_w1_types',
        columns: [
          { name: 'b', type: 'bool' },
          { name: 'i', type: 'int' },
          { name: 'l', type: 'long' },
          { name: 'r', type: 'real' },
          { name: 'd', type: 'decimal' },
          { name: 's', type: 'string' },
          { name: 't', type: 'datetime' },
          { name: 'ts', type: 'timespan' },
          { name: 'g', type: 'guid' },
          { name: 'dy', type: 'dynamic' },
        ],
      } as ConnectionTable
      const rows: unknown[][] = [
        [
          true,
          2_147_483_647,
          9_223_372_036_854_775_807n,
          Number.NaN,
          0.1,
          'it\'s "x"\n, é',
          T0,
          -1n,
          '6f1c7a8e-3d2b-4c5a-9e8f-0a1b2c3d4e5f',
          { a: [1, 'x'] },
        ],
        [
          false,
          -2_147_483_648,
          -9_223_372_036_854_775_808n,
          Number.POSITIVE_INFINITY,
          -0.5,
          '',
          0n,
          9_223_372_036_854_775_807n,
          null,
          [1.5, null],
        ],
        [null, null, null, Number.NEGATIVE_INFINITY, null, null, null, null, null, null],
        [true, 0, 9_007_199_254_740_993n, null, 1e308, 'k \u212A', -62_135_596_800_000n, 0n, null, 'text'],
        // rows move as CSV lines: one longer than DuckDB's default line limit (2 MB), quotes and
        // separators inside, and a value that is only a quote
        [false, 1, 1n, 5e-324, 2.5, `"${'a,"\n'.repeat(800_000)}"`, T0, 1n, null, { long: 'x"'.repeat(600_000) }],
        [false, 1, 1n, -0, 2.5, '"', T0, 1n, null, '"'],
      ]
      const defs = typed.columns.map((c) => `${quoteIdent(c.name)} ${db.engine.columnTypes[c.type]}`)
      await db.exec(
        `CREATE TABLE ${quoteIdent(typed.sqlName)} (_rowid BIGINT PRIMARY KEY, _ingested_at BIGINT NOT NULL, ${defs.join(', ')})`,
      )
      const names = ['_rowid', '_ingested_at', ...typed.columns.map((c) => quoteIdent(c.name))]
      for (const [k, row] of rows.entries()) {
        await db.run(
          `INSERT INTO ${quoteIdent(typed.sqlName)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
          [k + 1, 1_700_000_000_000 + k, ...typed.columns.map((c, i) => encodeValue(db.engine, c.type, row[i] as never))].map((v) =>
            typeof v === 'bigint' && !db.engine.bindsBigints ? String(v) : v,
          ),
        )
      }
      const columns = [
        { name: '_rowid', type: 'long' },
        { name: '_ingested_at', type: 'long' },
        ...typed.columns.map((c) => ({ name: c.name, type: c.type })),
      ] as const
      const select = `SELECT ${columns.map((c) => quoteIdent(c.name)).join(', ')} FROM ${quoteIdent(typed.sqlName)} ORDER BY "_rowid"`
      const read = async (): Promise<unknown[][]> => {
        const source = await store.openQuerySource([typed])
        try {
          return await source.query(select, [], columns as never)
        } finally {
          source.close()
        }
      }
      // the tail (row store → DuckDB temp table), then the same rows from the segment
      const fromTail = await read()
      assert.equal((await store.compact(typed))?.segment.rowCount, rows.length)
      const fromSegment = await read()
      assert.deepEqual(fromSegment, fromTail)
      // integers compare by their digits (a long decodes as a number when exact, else a bigint)
      const digits = (v: unknown): unknown => (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)) ? String(v) : v)
      const expected = rows.map((row, k) => [
        k + 1,
        1_700_000_000_000 + k,
        ...typed.columns.map((c, i) => (row[i] === null && c.type === 'string' ? '' : row[i])),
      ])
      assert.deepEqual(
        fromSegment.map((r) => r.map(digits)),
        expected.map((r) => r.map(digits)),
      )
    })

    it('check finds orphan files and removeOrphans deletes them; manifest and files agree', async () => {
      const orphan = join(dir, 'segments', table.sqlName, '.crashed.parquet.tmp')
      writeFileSync(orphan, 'partial')
      const report = await store.check()
      assert.deepEqual(report.missing, [])
      assert.deepEqual(report.mismatched, [])
      assert.deepEqual(report.orphans, [`${table.sqlName}/.crashed.parquet.tmp`])
      await store.removeOrphans()
      assert.ok(!existsSync(orphan))
      const files = readdirSync(join(dir, 'segments', table.sqlName))
      assert.equal(files.length, (await store.segments(table.sqlName)).length)
    })
  })
}

/** PostgreSQL rows for the reference: a plain SqlSource over the same SqlDb (whole-table reads only). */
function columnarRowStore(db: SqlDb): SqlSource {
  return {
    async query(sql, params, columns) {
      const rows = await db.all<Record<string, unknown>>(sql, params, { exactIntegers: true })
      const { decodeValue } = await import('../sql/column-codec.js')
      return rows.map((r) => columns.map((c, i) => decodeValue(c.type, Object.values(r)[i])))
    },
  }
}
