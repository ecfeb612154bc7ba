/**
 * @module
 * Property tests of the exact 64-bit `long` (issue 17 item 1): random pairs drawn around ±2^53
 * and the int64 limits, computed by the in-memory evaluator, by SQLite and by PostgreSQL (tables
 * in the production layout, read through the production SqlSource, with and without pushdown),
 * against a BigInt reference with Kusto's rules: wrap-around at 64 bits, division truncating
 * toward zero, a modulo that is never negative, null for a zero divisor.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { canonLong, compileQuery, type KqlSchema, type KqlValue, toWireRows } from '../../src/kql/index.js'
import { openSqlFixture, type SqlFixture } from './sql-fixture.js'

const MIN = -(2n ** 63n)
const MAX = 2n ** 63n - 1n
const P53 = 2n ** 53n

/** Biased to the edges: near ±2^53, near the int64 limits, small, and anywhere in int64. */
const int64 = fc.oneof(
  fc.bigInt({ min: P53 - 4n, max: P53 + 4n }),
  fc.bigInt({ min: -P53 - 4n, max: -P53 + 4n }),
  fc.bigInt({ min: MAX - 4n, max: MAX }),
  fc.bigInt({ min: MIN, max: MIN + 4n }),
  fc.bigInt({ min: -20n, max: 20n }),
  fc.bigInt({ min: MIN, max: MAX }),
)

const wrap = (v: bigint): bigint => BigInt.asIntN(64, v)
const mod = (a: bigint, b: bigint): bigint | null => {
  if (b === 0n) return null
  const m = b < 0n ? -b : b
  const r = a % m
  return r < 0n ? r + m : r
}

/** The expected row for a pair, in the query's column order (bigint or null; bools as is). */
function expected(a: bigint, b: bigint): unknown[] {
  return [
    wrap(a + b),
    wrap(a - b),
    wrap(a * b),
    b === 0n ? null : wrap(a / b),
    mod(a, b),
    wrap(-a),
    a < b,
    a === b,
    a.toString(),
    wrap(a & b),
    wrap(a ^ b),
    wrap(a < 0n ? -a : a),
  ]
}

const EXPRS =
  's = a + b, d = a - b, p = a * b, q = a / b, m = a % b, n = -a, lt = a < b, eq = a == b, t = tostring(a), band = binary_and(a, b), bxor = binary_xor(a, b), ab = abs(a)'

/** Wire values back to bigint for comparison (longs are canonical numbers or bigints). */
const norm = (v: unknown): unknown => (typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v)

const schemaFor = (run: number): KqlSchema => ({
  tables: [
    {
      name: 'P',
      columns: [
        { name: 'a', type: 'long' },
        { name: 'b', type: 'long' },
      ],
      sqlName: `p_${run}`,
    },
  ],
})

describe('exact 64-bit long arithmetic against a BigInt reference', () => {
  let fixture: SqlFixture
  before(async () => {
    fixture = await openSqlFixture()
  })
  after(() => fixture.close())

  it('in memory: literals, operators and functions', async () => {
    await fc.assert(
      fc.asyncProperty(int64, int64, async (a, b) => {
        const q = compileQuery(`print a = tolong("${a}"), b = tolong("${b}") | project ${EXPRS}`, { tables: [] }, { dialect: 'sqlite' })
        const wire = toWireRows(await q.execute(undefined, { now: 0n, rowCap: 1000 }))
        const row = wire.columns.map((c) => norm(wire.results[0]![c.name]))
        assert.deepEqual(row, expected(a, b), `a=${a} b=${b}`)
      }),
      { numRuns: Number(process.env.PROVENANT_FC_RUNS ?? 300), seed: 20261126 },
    )
  })

  it('SQLite and PostgreSQL: stored, filtered, computed and summed exactly (pushed down and in memory)', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(int64, int64), { minLength: 1, maxLength: 12 }), async (pairs) => {
        run++
        const rows = pairs.map(([a, b]) => [canonLong(a), canonLong(b)] as KqlValue[])
        await fixture.load([
          {
            sqlName: `p_${run}`,
            columns: [
              { name: 'a', type: 'long' },
              { name: 'b', type: 'long' },
            ],
            rows,
          },
        ])
        const schema = schemaFor(run)
        const want = pairs.map(([a, b]) => [a, b, ...expected(a, b)])
        const sum = pairs.reduce((acc, [a]) => wrap(acc + a), 0n)
        const threshold = pairs[0]![0]
        const above = pairs.filter(([a]) => a > threshold).length
        // avg of long is real (Kusto): the exact sum (not wrapped), rounded to a double once and
        // divided once by the count — what SQL computes on every backend (issue 17); no values: NaN, "NaN" on the wire
        const mean = (xs: readonly bigint[]): number | string =>
          xs.length === 0 ? 'NaN' : Number(xs.reduce((x, y) => x + y, 0n)) / xs.length
        const avg = mean(pairs.map(([a]) => a))
        const avgAbove = mean(pairs.filter(([a]) => a > threshold).map(([a]) => a))
        for (const backend of fixture.backends) {
          for (const pushdown of [true, false]) {
            const source = fixture.sources[backend]!
            const run1 = toWireRows(
              await compileQuery(`P | extend ${EXPRS}`, schema, { dialect: backend, pushdown }).execute(source, { now: 0n, rowCap: 1000 }),
            )
            const got = run1.results.map((r) => run1.columns.map((c) => norm(r[c.name])))
            const key = (r: unknown[]): string => `${r[0]}|${r[1]}`
            assert.deepEqual(
              got
                .map(key)
                .sort()
                .map((k) => got.find((r) => key(r) === k)),
              want
                .map(key)
                .sort()
                .map((k) => want.find((r) => key(r) === k)),
              `${backend} pushdown=${pushdown}`,
            )
            const agg = toWireRows(
              await compileQuery(
                `P | summarize s = sum(a), c = countif(a > tolong("${threshold}")), m = avg(a), mi = avgif(a, a > tolong("${threshold}"))`,
                schema,
                {
                  dialect: backend,
                  pushdown,
                },
              ).execute(source, { now: 0n, rowCap: 1000 }),
            )
            assert.deepEqual(norm(agg.results[0]!['s']), sum, `${backend} pushdown=${pushdown}: sum`)
            assert.deepEqual(agg.results[0]!['c'], above, `${backend} pushdown=${pushdown}: filter`)
            assert.deepEqual(agg.results[0]!['m'], avg, `${backend} pushdown=${pushdown}: avg`)
            assert.deepEqual(agg.results[0]!['mi'], avgAbove, `${backend} pushdown=${pushdown}: avgif`)
          }
        }
      }),
      { numRuns: Number(process.env.PROVENANT_FC_RUNS ?? 40), seed: 20261127 },
    )
  })
})
