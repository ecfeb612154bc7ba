import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { duckdbDialect } from '../../kql/dialect/duckdb/duckdb-dialect.js'
import { SqlRefusalError } from '../../kql/index.js'
import { createDuckdbQuerySource, type DuckdbQuerySource, DuckdbResultTooLargeError } from './duckdb-query-source.js'

describe('duckdb dialect', () => {
  let instance: DuckDBInstance
  let source: DuckdbQuerySource
  before(async () => {
    instance = await DuckDBInstance.create(':memory:', { threads: '1' })
    source = createDuckdbQuerySource(await instance.connect())
  })
  after(() => instance.closeSync())

  it('pushes ASCII case-insensitive needles only, always as parameters', () => {
    const bound: string[] = []
    const bind = (v: string): string => {
      bound.push(v)
      return `$${bound.length}::VARCHAR`
    }
    assert.equal(duckdbDialect.stringMatch('contains', 't', 'Über', bind), undefined)
    assert.equal(duckdbDialect.stringMatch('has', 't', 'é', bind), undefined)
    assert.equal(duckdbDialect.inIgnoreCase('t', ['a', 'é'], bind), undefined)
    const eq = duckdbDialect.stringMatch('=~', 't', 'AbC', bind)!
    assert.deepEqual(bound, ['abc', 'ABC'])
    assert.ok(!eq.includes('AbC'), eq)
  })

  it('integer division truncates toward zero and gives NULL for a zero divisor; ticks bin with %', async () => {
    const sql = `SELECT ${duckdbDialect.integerDivide('$1::BIGINT', '$2::BIGINT')}, ${duckdbDialect.integerDivide('$1::BIGINT', '$3::BIGINT')}`
    const rows = await source.query(
      sql,
      [-7n, 2n, 0n],
      [
        { name: 'a', type: 'long' },
        { name: 'b', type: 'long' },
      ],
    )
    assert.deepEqual(rows, [[-3, null]])
  })

  it('real arithmetic keeps IEEE results (±Infinity, NaN) as JavaScript does', async () => {
    const rows = await source.query(
      `SELECT 1.0::DOUBLE / 0.0::DOUBLE, 'inf'::DOUBLE - 'inf'::DOUBLE`,
      [],
      [
        { name: 'a', type: 'real' },
        { name: 'b', type: 'real' },
      ],
    )
    assert.equal(rows[0]![0], Infinity)
    assert.ok(Number.isNaN(rows[0]![1]))
  })

  it('interrupt() stops a running statement at once (the pool calls it when a query is stopped)', async () => {
    const running = Promise.resolve(
      source.query('SELECT count(*) FROM range(100000000000) t(x) WHERE x % 7 = 3', [], [{ name: 'n', type: 'long' }]),
    )
    const outcome = running.then(
      () => 'finished',
      (error: Error) => error.message,
    )
    let settled = false
    void outcome.then(() => {
      settled = true
    })
    // an interrupt that arrives before the statement starts is lost: repeat until it ends (bounded)
    for (let i = 0; i < 100 && !settled; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      source.interrupt()
    }
    assert.match(await outcome, /interrupt/i, 'a hundred billion rows cannot finish: only the interrupt ends it')
    const after = await source.query('SELECT 1', [], [{ name: 'n', type: 'long' }])
    assert.deepEqual(after, [[1]], 'the connection answers again')
  })

  it('64-bit overflow and a has-term over non-ASCII text are refusals (the evaluator answers)', async () => {
    await assert.rejects(
      Promise.resolve(source.query('SELECT $1::BIGINT + 1', [9223372036854775807n], [{ name: 'a', type: 'long' }])),
      SqlRefusalError,
    )
    const bind = (() => {
      const values: string[] = []
      return Object.assign(
        (v: string) => {
          values.push(v)
          return `$${values.length}::VARCHAR`
        },
        { values },
      )
    })()
    const has = duckdbDialect.stringMatch('has', 't', 'k', bind)!
    const sql = `SELECT count(*) FROM (VALUES ('a k'), ('\u212A x')) v(t) WHERE ${has}`
    await assert.rejects(Promise.resolve(source.query(sql, bind.values, [{ name: 'n', type: 'long' }])), SqlRefusalError)
    const ascii = `SELECT count(*) FROM (VALUES ('a k'), ('ak'), ('K-9')) v(t) WHERE ${has}`
    assert.deepEqual(await source.query(ascii, bind.values, [{ name: 'n', type: 'long' }]), [[2]])
  })

  it('refuses, before decoding, a result the budget cannot hold: the main thread decodes it and the worker could not hold it', async () => {
    const sql = 'SELECT i, i * 2.5 FROM range(10000) t(i)'
    const columns = [
      { name: 'i', type: 'long' },
      { name: 'x', type: 'real' },
    ] as const
    // 10,000 rows of 2 columns at 80 bytes each: 800,000 bytes
    await assert.rejects(Promise.resolve(source.query(sql, [], columns, { maxBytes: 799_999 })), DuckdbResultTooLargeError)
    assert.equal((await source.query(sql, [], columns, { maxBytes: 800_000 })).length, 10_000)
    assert.equal((await source.query(sql, [], columns)).length, 10_000, 'no budget, no bound')
  })
})
