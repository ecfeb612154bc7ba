/**
 * Random KQL (issue 10, item 4): queries generated from a small grammar — valid-ish pipelines over
 * the workspace's tables with random operators, expressions and literals, then damaged with random
 * tokens — sent to the ad-hoc query endpoint on both backends. The answer is a 200, or a 400 in the
 * envelope whose KQL message names a line and column (run-time limits name none); never a 5xx, never
 * a hang (each request has 30 s). Queries are read-only: every table is compared before and after.
 * PROVENANT_FUZZ_RUNS scales the number of queries (default 4 → 100 queries per backend).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { openRawDatabase, type RawDatabase } from '../support/raw-database.js'
import { snapshotDifferences, snapshotTables, type TableSnapshot } from '../support/table-snapshot.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const QUERIES = 25 * Number(process.env['PROVENANT_FUZZ_RUNS'] ?? 4)

const column = fc.constantFrom(
  'timestamp',
  'sensor',
  'value',
  'kwh',
  '_rowid',
  'nope',
  "['value']",
  '["sen\'sor"]',
  "['x\"; DROP TABLE tokens; --']",
  '$left',
  'Sensors',
)
const stringLiteral = fc.oneof(
  fc.constantFrom(
    "'s1'",
    '"s2"',
    "@'C:\\\\path'",
    "'it''s'",
    "'\\''",
    "'\\u0000'",
    "'x'' OR ''1''=''1'",
    '"\'; DROP TABLE workspaces; --"',
    "h'secret'",
    "'\\x'",
    '```multi\nline```',
    "'😀'",
    "''",
  ),
  fc.string({ maxLength: 12 }).map((s) => `'${s.replace(/[\\'\n\r]/g, '')}'`),
)
const numberLiteral = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom(
    '0',
    '1.5',
    '1e3',
    '0x1F',
    '9223372036854775807',
    '-9223372036854775808',
    '99999999999999999999',
    '1e309',
    '.5',
    '1.',
    '007',
    '1d',
    '2h',
    '30m',
    '1.5s',
    '100ms',
    '1tick',
    '1x',
  ),
)
const literal = fc.oneof(
  stringLiteral,
  numberLiteral,
  fc.constantFrom(
    'true',
    'false',
    'bool(null)',
    'long(null)',
    'datetime(2026-01-01)',
    'datetime(2026-13-45)',
    'datetime(null)',
    'now()',
    'ago(1d)',
    'dynamic([1, "a", {"b": null}])',
    'dynamic({"a": [1, 2]})',
    'dynamic(nope)',
    'guid(00000000-0000-0000-0000-000000000000)',
    'timespan(1.02:03:04)',
    'real(nan)',
    'real(+inf)',
  ),
)

const { expr } = fc.letrec((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    column,
    literal,
    literal,
    fc
      .tuple(
        tie('expr'),
        fc.constantFrom(
          '+',
          '-',
          '*',
          '/',
          '%',
          '==',
          '!=',
          '<',
          '>=',
          'and',
          'or',
          'contains',
          '!contains',
          'has',
          'startswith',
          '=~',
          'matches regex',
          'in',
          'between',
          '..',
        ),
        tie('expr'),
      )
      .map(([a, op, b]) => `${a} ${op} ${b}`),
    fc
      .tuple(
        fc.constantFrom(
          'strlen',
          'tolower',
          'toupper',
          'tostring',
          'toint',
          'tolong',
          'todouble',
          'todatetime',
          'bin',
          'iff',
          'case',
          'substring',
          'split',
          'strcat',
          'extract',
          'parse_json',
          'array_length',
          'isempty',
          'isnull',
          'round',
          'floor',
          'format_datetime',
          'datetime_diff',
          'replace_string',
          'hash',
          'coalesce',
          'not',
          'sqrt',
          'log',
          'pow',
          'unknown_fn',
        ),
        fc.array(tie('expr'), { maxLength: 3 }),
      )
      .map(([f, args]) => `${f}(${args.join(', ')})`),
    tie('expr').map((e) => `(${e})`),
    tie('expr').map((e) => `-${e}`),
  ),
}))

const aggregate = fc
  .tuple(
    fc.constantFrom('count()', 'dcount', 'sum', 'avg', 'min', 'max', 'make_list', 'arg_max', 'percentile', 'countif', 'stdev', 'any'),
    expr,
  )
  .map(([a, e]) =>
    a === 'count()' ? a : a === 'percentile' ? `percentile(${e}, 50)` : a === 'arg_max' ? `arg_max(${e}, *)` : `${a}(${e})`,
  )

const operator = fc.oneof(
  expr.map((e) => `where ${e}`),
  fc.tuple(column, expr).map(([c, e]) => `extend ${c} = ${e}`),
  fc.array(column, { minLength: 1, maxLength: 3 }).map((cs) => `project ${cs.join(', ')}`),
  fc.array(column, { minLength: 1, maxLength: 2 }).map((cs) => `project-away ${cs.join(', ')}`),
  fc.tuple(column, column).map(([a, b]) => `project-rename ${a} = ${b}`),
  fc.tuple(aggregate, fc.array(expr, { maxLength: 2 })).map(([a, by]) => `summarize ${a}${by.length ? ` by ${by.join(', ')}` : ''}`),
  numberLiteral.map((n) => `take ${n}`),
  fc.tuple(numberLiteral, column, fc.constantFrom('asc', 'desc', '', 'nulls first')).map(([n, c, d]) => `top ${n} by ${c} ${d}`),
  fc.tuple(column, fc.constantFrom('asc', 'desc', '')).map(([c, d]) => `order by ${c} ${d}`),
  fc.array(column, { minLength: 1, maxLength: 2 }).map((cs) => `distinct ${cs.join(', ')}`),
  fc.constantFrom(
    'count',
    'serialize',
    'getschema',
    'union Meters',
    'union (Meters | take 1)',
    'join kind=inner (Meters) on timestamp',
    'join kind=leftouter (Sensors | take 2) on $left.sensor == $right.sensor',
    'lookup (Meters) on timestamp',
    'mv-expand x = dynamic([1,2,3])',
    'parse sensor with "s" n:int',
    'sample 2',
    'as T',
    'invoke f()',
    'evaluate bag_unpack(d)',
    'render timechart',
    'make-series avg(value) on timestamp step 1h',
    'extend r = row_number()',
    'search "s1"',
    'find "x"',
    'externaldata (a:string) ["http://127.0.0.1/"]',
    'top-nested 2 of sensor by count()',
  ),
)

const source = fc.constantFrom(
  'Sensors',
  'Meters',
  "['Sensors']",
  'sensors',
  'Unknown',
  "['Sensors; DROP TABLE tokens']",
  '["Sen\'sors"]',
  'print x = 1',
  'range x from 1 to 10 step 1',
  'range x from 1 to 100000000 step 1',
  'datatable(a:long, b:string)[1, "x", 2, "y"]',
  'let T = Sensors; T',
  'union Sensors, Meters',
  'union *',
  'database("other").Sensors',
  'cluster("x").database("y").T',
  'Sensors | join (Meters) on timestamp',
)

const pipeline = fc.tuple(source, fc.array(operator, { maxLength: 4 })).map(([s, ops]) => [s, ...ops].join('\n| '))

/** Pipelines meant to run (so the engine and the SQL it generates are reached, not only the parser). */
const validOperator = fc.oneof(
  fc.integer({ min: -5, max: 40 }).map((n) => `where value > ${n}`),
  stringLiteral.map((s) => `where sensor == ${s}`),
  stringLiteral.map((s) => `where sensor has ${s} or sensor !contains ${s}`),
  stringLiteral.map((s) => `extend label = strcat(sensor, ${s})`),
  fc.constantFrom(
    'extend twice = value * 2',
    'project sensor, value',
    'summarize n = count(), total = sum(value) by sensor',
    'order by timestamp asc',
    'distinct sensor',
    'extend day = bin(timestamp, 1d)',
    'extend s = tostring(value)',
    'where timestamp >= datetime(2026-01-01) and timestamp < datetime(2026-01-02)',
    'project-away timestamp',
  ),
  fc.constantFrom('3', '0', '9223372036854775807', '1e300').map((n) => `take ${n}`),
  fc.constantFrom('2', '9223372036854775807').map((n) => `top ${n} by value desc`),
)
const validPipeline = fc.array(validOperator, { maxLength: 3 }).map((ops) => ['Sensors', ...ops].join('\n| '))

const NOISE = [
  '|',
  ',',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '==',
  "'",
  '"',
  '//',
  ';',
  '\n',
  'let',
  '$',
  '@',
  '`',
  '```',
  'h"',
  '\u0000',
  '\ud800',
  '😀',
  '\\',
  '=>',
  '..',
  'by',
  '*',
  '#',
  '\t',
  '\r\n',
  ' '.repeat(300),
  'x'.repeat(3000),
  '('.repeat(300),
]

/** A pipeline, sometimes damaged: a random token inserted, or a cut. */
const query = fc.oneof(
  { weight: 2, arbitrary: validPipeline },
  { weight: 3, arbitrary: pipeline },
  {
    weight: 2,
    arbitrary: fc.tuple(pipeline, fc.constantFrom(...NOISE), fc.nat()).map(([q, t, at]) => {
      const i = at % (q.length + 1)
      return q.slice(0, i) + t + q.slice(i)
    }),
  },
  { weight: 1, arbitrary: fc.tuple(pipeline, fc.nat()).map(([q, at]) => q.slice(0, at % (q.length + 1))) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
)

for (const backend of BACKENDS) {
  describe(`${backend}: random KQL`, () => {
    let server: TestServer
    let db: RawDatabase
    let token: string
    let before0: TableSnapshot
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(30))
      token = await server.token('analyst')
      db = await openRawDatabase(server)
      before0 = await snapshotTables(db)
    })
    after(async () => {
      await db.close()
      await server.stop()
    })

    it('answers 200, or 400 with a line and column; never 5xx, never a hang', async (t) => {
      const outcomes = { ok: 0, positioned: 0, runtime: 0, other: 0 }
      await fc.assert(
        fc.asyncProperty(query, async (text) => {
          const response = await fetch(`${server.baseUrl}/oi-api/warm-queries`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ Query: text }),
            signal: AbortSignal.timeout(30_000),
          })
          const body = await response.text()
          assert.ok(
            response.status === 200 || response.status === 400,
            `${response.status} for ${JSON.stringify(text).slice(0, 300)}: ${body.slice(0, 300)}`,
          )
          if (response.status === 200) return void outcomes.ok++
          const message = (JSON.parse(body) as { HasError: boolean; Messages: { Error: string } }).Messages.Error
          if (/^KQL (error|not supported)/.test(message)) {
            // Syntax, name and type errors, and what the engine does not support, name where.
            assert.match(
              message,
              /^KQL (error|not supported): line \d+, column \d+: /,
              `no position for ${JSON.stringify(text).slice(0, 200)}: ${message}`,
            )
            outcomes.positioned++
          } else if (/^KQL run-time error/.test(message)) outcomes.runtime++
          else {
            // Input errors before the parser: an empty query, a NUL, an over-long text.
            assert.match(message, /^(Query|body\.Query|the request body is not valid JSON)/, message)
            outcomes.other++
          }
        }),
        { numRuns: QUERIES },
      )
      t.diagnostic(`outcomes: ${JSON.stringify(outcomes)}`)
      // The grammar must reach both sides: if every query failed to parse, it would test little.
      assert.ok(outcomes.ok >= QUERIES / 20, `only ${outcomes.ok} of ${QUERIES} queries ran: ${JSON.stringify(outcomes)}`)
      assert.ok(outcomes.positioned >= QUERIES / 10, JSON.stringify(outcomes))
    })

    it('changed no stored data, and the server still answers', async () => {
      assert.deepEqual(snapshotDifferences(before0, await snapshotTables(db)), [])
      assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200)
    })
  })
}
