import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { kqlTable, ROWID } from '../../test/support/kql-schema.js'
import { compileQuery } from './compile-query.js'
import type { SqlSource } from './engine-types.js'
import { KqlError } from './kql-error.js'
import type { KqlColumn, KqlSchema } from './schema.js'
import type { KqlValue } from './types.js'
import { toWireRows } from './wire-rows.js'

const HOUR = 36_000_000_000n
const T0 = 17040672000000000n // 2024-01-01T00:00:00Z

const schema: KqlSchema = {
  tables: [
    kqlTable(
      'Readings',
      'conn_readings',
      { timestamp: 'datetime', Device: 'string', Temperature: 'real' },
      { hiddenColumns: ROWID, sqlColumns: { Temperature: 'temp_c' } },
    ),
    kqlTable('Odd', 'we"ird table', { 'a"b': 'long' }),
  ],
}

const ROWS: KqlValue[][] = [
  [T0, 'a', 20.5, 1],
  [T0 + HOUR, 'b', 21.5, 2],
  [T0 + 2n * HOUR, 'a', 22.5, 3],
]

function recordingSource(
  rows: KqlValue[][] = ROWS,
): SqlSource & { calls: { sql: string; params: readonly unknown[]; columns: readonly KqlColumn[] }[] } {
  const calls: { sql: string; params: readonly unknown[]; columns: readonly KqlColumn[] }[] = []
  return {
    calls,
    query(sql, params, columns) {
      calls.push({ sql, params, columns })
      return rows
    },
  }
}

const run = { now: T0 + 10n * HOUR, rowCap: 1000 }
const compile = (q: string) => compileQuery(q, schema, { dialect: 'sqlite' })
/** The whole-table path: every table read with one plain SELECT, everything else in memory. */
const compileInMemory = (q: string) => compileQuery(q, schema, { dialect: 'sqlite', pushdown: false })

describe('compileQuery / execute', () => {
  it('without pushdown, reads a table with one plain SELECT of its quoted physical columns and no parameters', async () => {
    const source = recordingSource()
    const q = compileInMemory('Readings | where Temperature > 21 | project Device, Temperature')
    assert.deepEqual(q.columns, [
      { name: 'Device', type: 'string' },
      { name: 'Temperature', type: 'real' },
    ])
    assert.deepEqual(q.tables, ['Readings'])
    const result = await q.execute(source, run)
    assert.equal(source.calls.length, 1)
    assert.equal(source.calls[0]!.sql, 'SELECT "timestamp", "Device", "temp_c", "_rowid" FROM "conn_readings"')
    assert.deepEqual(source.calls[0]!.params, [])
    assert.deepEqual(
      source.calls[0]!.columns.map((c) => c.type),
      ['datetime', 'string', 'real', 'long'],
    )
    assert.deepEqual(result.rows, [
      ['b', 21.5],
      ['a', 22.5],
    ])
    assert.equal(result.truncated, false)
  })

  it('quotes hostile identifiers by doubling embedded quotes', async () => {
    const source = recordingSource([[1]])
    await compileInMemory("Odd | project ['a\"b']").execute(source, run)
    assert.equal(source.calls[0]!.sql, 'SELECT "a""b" FROM "we""ird table"')
  })

  it('fetches a table once per run even when the query reads it twice', async () => {
    const source = recordingSource()
    const result = await compileInMemory(
      'Readings | join kind=inner (Readings | project Device, T2 = Temperature) on Device | count',
    ).execute(source, run)
    assert.equal(source.calls.length, 1)
    assert.deepEqual(result.rows, [[5]])
  })

  it('caps the final result and says so', async () => {
    const result = await compile('range x from 1 to 10 step 1').execute(undefined, { ...run, rowCap: 3 })
    assert.deepEqual(result.rows, [[1], [2], [3]])
    assert.equal(result.truncated, true)
    const exact = await compile('range x from 1 to 3 step 1').execute(undefined, { ...run, rowCap: 3 })
    assert.equal(exact.truncated, false)
  })

  it('uses the given now() for the whole query', async () => {
    const result = await compile('print n = now(), a = ago(1h), same = now() == now()').execute(undefined, run)
    assert.deepEqual(result.rows, [[run.now, run.now - HOUR, true]])
  })

  it('samples deterministically for a seed', async () => {
    const q = compile('range x from 1 to 1000 step 1 | sample 5 | summarize make_list(x)')
    const a = await q.execute(undefined, { ...run, seed: 7 })
    const b = await q.execute(undefined, { ...run, seed: 7 })
    const c = await q.execute(undefined, { ...run, seed: 8 })
    assert.deepEqual(a.rows, b.rows)
    assert.notDeepEqual(a.rows, c.rows)
  })

  it('refuses an intermediate result over 5,000,000 rows with a runtime error', async () => {
    await assert.rejects(compile('range x from 1 to 6000000 step 1 | count').execute(undefined, run), (e: unknown) => {
      assert.ok(e instanceof KqlError)
      assert.equal(e.kind, 'runtime')
      assert.match(e.message, /more than 5,000,000 rows/)
      return true
    })
  })

  it('stops when the signal aborts, rejecting with its reason', async () => {
    const before = new AbortController()
    before.abort(new Error('cap'))
    await assert.rejects(compile('print 1').execute(undefined, { ...run, signal: before.signal }), /cap/)
    // aborted at the evaluator's first yield to the event loop (it yields every few thousand rows),
    // so the 4M-row run must stop mid-loop with the reason; no wall-clock bound, which flaked
    // under load
    const during = new AbortController()
    setImmediate(() => during.abort(new Error('time cap')))
    await assert.rejects(
      compile('range x from 1 to 4000000 step 1 | extend y = x * 2 | summarize sum(y)').execute(undefined, {
        ...run,
        signal: during.signal,
      }),
      /time cap/,
    )
  })

  it('needs a source for a query that reads a table, and passes database errors through', async () => {
    await assert.rejects(
      compile('Readings').execute(undefined, run),
      (e: unknown) => e instanceof KqlError && /no data source/.test(e.message),
    )
    const boom = new Error('disk I/O error')
    const failing: SqlSource = { query: () => Promise.reject(boom) }
    await assert.rejects(compile('Readings | count').execute(failing, run), (e: unknown) => e === boom)
  })

  it('returns the render hint with the result', async () => {
    const result = await compile('range x from 1 to 2 step 1 | render columnchart').execute(undefined, run)
    assert.deepEqual(result.visualization, { kind: 'columnchart', properties: {} })
  })
})

describe('toWireRows', () => {
  it('keys rows by column name and writes values in their wire form', async () => {
    const result = await compile(
      `print d = datetime(2024-01-01 10:30:00.25), t = 90m, s = '', n = real(nan), i = real(-inf), g = dynamic({"a": [1, 2]}), l = long(null), b = true`,
    ).execute(undefined, run)
    assert.deepEqual(toWireRows(result), {
      columns: [
        { name: 'd', type: 'datetime' },
        { name: 't', type: 'timespan' },
        { name: 's', type: 'string' },
        { name: 'n', type: 'real' },
        { name: 'i', type: 'real' },
        { name: 'g', type: 'dynamic' },
        { name: 'l', type: 'long' },
        { name: 'b', type: 'bool' },
      ],
      results: [{ d: '2024-01-01T10:30:00.25Z', t: '01:30:00', s: '', n: 'NaN', i: '-Infinity', g: { a: [1, 2] }, l: null, b: true }],
    })
  })
})
