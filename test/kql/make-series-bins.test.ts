/**
 * make-series over pre-aggregated bins (src/kql/binder/make-series-bins.ts) answers exactly as
 * make-series over every row, in memory and pushed into each SQL backend: every query is compared
 * with the same query plus a constant column (`k_ = 1`), which keeps the binder from
 * pre-aggregating, over rows that probe the edges (null and out-of-range axis values, the first
 * and the partial last bin, null/NaN/±Infinity values, null and empty keys, longs beyond 2^53).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { compileQuery, type KqlSchema, type KqlType, type KqlValue, toWireRows } from '../../src/kql/index.js'
import type { PlanNode } from '../../src/kql/plan/plan.js'
import { visitPlan } from '../../src/kql/plan/plan-walk.js'
import { openSqlFixture, type SqlFixture } from './sql-fixture.js'

const HOUR = 36_000_000_000n
/** 2024-01-01T00:00:00Z in ticks since the Unix epoch. */
const T0 = 1_704_067_200_000n * 10_000n
const NOW = T0 + 100n * HOUR

const COLUMNS = [
  { name: 'ts', type: 'datetime' },
  { name: 'k', type: 'string' },
  { name: 'v', type: 'real' },
  { name: 'l', type: 'long' },
  { name: 'd', type: 'timespan' },
] as const satisfies readonly { name: string; type: KqlType }[]
const SCHEMA: KqlSchema = { tables: [{ name: 'T', columns: COLUMNS, sqlName: 't_series' }] }

const at = (hours: number, minutes = 0): bigint => T0 + BigInt(hours) * HOUR + (BigInt(minutes) * HOUR) / 60n
const ROWS: KqlValue[][] = [
  [at(0), 'a', 1.5, 1, HOUR],
  [at(0, 59), 'a', 2.5, 2n ** 53n + 1n, 2n * HOUR],
  [at(1), 'a', null, null, null],
  [at(1, 30), 'a', Number.NaN, 7, -HOUR],
  [at(2), 'b', Number.POSITIVE_INFINITY, -(2n ** 62n), 0n],
  [at(2, 10), 'b', -3, 2n ** 62n, 5n],
  [at(-1), 'a', 100, 100, HOUR], // before from
  [at(5), 'a', 200, 200, HOUR], // in the partial last bin (to = 5h30, step 2h: bins 0, 2h, 4h)
  [at(6), 'a', 300, 300, HOUR], // after to
  [null, 'a', 400, 400, HOUR], // no axis value
  [at(3), '', 4, 4, HOUR],
  [at(4, 1), '', Number.NEGATIVE_INFINITY, -1, HOUR],
  [at(3, 3), 'c', Number.NaN, null, null],
  // issue 17: three longs 2^53 + 1, whose mean added in doubles would be 2^53 (exactly: 2^53 + 2)
  [at(0, 5), 'd', 1, 2n ** 53n + 1n, null],
  [at(0, 6), 'd', 1, 2n ** 53n + 1n, null],
  [at(0, 7), 'd', 1, 2n ** 53n + 1n, null],
]

const QUERIES = [
  'T | make-series n = count(), s = sum(v), a = avg(v), lo = min(v), hi = max(v) default = -1 on ts from datetime(2024-01-01) to datetime(2024-01-01T05:30:00Z) step 2h by k',
  'T | make-series sum(l), min(l), max(l), sum(d), min(d), max(d), min(ts) on ts from datetime(2024-01-01) to datetime(2024-01-01T05:30:00Z) step 1h by k',
  'T | where k != "c" | make-series count() on ts from datetime(2024-01-01) to datetime(2024-01-02) step 1d',
  'T | make-series kind=nonempty count(), avg(v) on ts from datetime(2023-01-01) to datetime(2023-01-02) step 1h',
  'T | extend g = strlen(k) | make-series avg(v) on ts from datetime(2024-01-01) to datetime(2024-01-01T06:00:00Z) step 30m by g, k',
  // issue 17: the mean of longs beyond 2^53 is the exact sum divided once, in SQL as in memory
  'T | make-series a = avg(l), s = sum(l) on ts from datetime(2024-01-01) to datetime(2024-01-01T05:30:00Z) step 2h by k',
]

const preAggregated = (plan: PlanNode): boolean => {
  let found = false
  visitPlan(plan, (node) => {
    if (node.kind === 'MakeSeries' && node.preAggregated) found = true
  })
  return found
}

describe('make-series over pre-aggregated bins answers as make-series over every row', () => {
  let fixture: SqlFixture
  before(async () => {
    fixture = await openSqlFixture()
    await fixture.load([{ sqlName: 't_series', columns: COLUMNS, rows: ROWS }])
  })
  after(() => fixture.close())

  it('in memory and on every SQL backend', async () => {
    for (const text of QUERIES) {
      const reference = `${text.replace(/ on ts /, ', k_ = 1 on ts ')} | project-away k_`
      assert.ok(preAggregated(compileQuery(text, SCHEMA, { dialect: 'sqlite' }).plan), `pre-aggregated: ${text}`)
      assert.ok(!preAggregated(compileQuery(reference, SCHEMA, { dialect: 'sqlite' }).plan), `not pre-aggregated: ${reference}`)
      const sorted = (r: Awaited<ReturnType<ReturnType<typeof compileQuery>['execute']>>): string[] =>
        toWireRows(r)
          .results.map((row) => JSON.stringify(row, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)))
          .sort()
      const expected = sorted(
        await compileQuery(reference, SCHEMA, { dialect: 'sqlite', pushdown: false }).execute(fixture.sources.sqlite!, {
          now: NOW,
          rowCap: 1000,
        }),
      )
      assert.ok(expected.length > 0, text)
      const memory = await compileQuery(text, SCHEMA, { dialect: 'sqlite', pushdown: false }).execute(fixture.sources.sqlite!, {
        now: NOW,
        rowCap: 1000,
      })
      assert.deepEqual(sorted(memory), expected, `memory: ${text}`)
      for (const backend of fixture.backends) {
        const got = await compileQuery(text, SCHEMA, { dialect: backend }).execute(fixture.sources[backend]!, { now: NOW, rowCap: 1000 })
        assert.deepEqual(sorted(got), expected, `${backend}: ${text}`)
      }
    }
  })

  it('is left out where bins would not start where make-series starts them', () => {
    for (const text of [
      'T | make-series count() on ts from datetime(2024-01-01T00:30:00Z) to datetime(2024-01-02) step 1h',
      'T | make-series count() on ts in range(datetime(2024-01-01), datetime(2024-01-02), 1h)',
      'T | make-series count() on ts step 1h',
      'T | make-series dcount(k) on ts from datetime(2024-01-01) to datetime(2024-01-02) step 1h',
    ])
      assert.ok(!preAggregated(compileQuery(text, SCHEMA, { dialect: 'sqlite' }).plan), text)
  })
})
