/**
 * @module
 * Property tests: whatever text arrives, compileQuery either compiles it or throws a KqlError that
 * carries a position (never another error, never an "internal error"); and a query that compiles
 * runs to a result or a KqlError.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { compileQuery, KqlError, type KqlSchema } from '../../src/kql/index.js'
import { kqlTable } from '../support/kql-schema.js'

const schema: KqlSchema = { tables: [kqlTable('T', 't', { x: 'long', s: 'string', ts: 'datetime', d: 'dynamic' })] }

/** Rows the fake source returns for table T (whole-table reads: these properties compile without pushdown). */
const ROWS = [
  [1, 'a b', 17040672000000000n, { k: [1, 2] }],
  [2, 'c', null, null],
  [null, '', 17040708000000000n, [3]],
]
const source = { query: () => ROWS }

function checkCompile(text: string): ReturnType<typeof compileQuery> | undefined {
  try {
    const q = compileQuery(text, schema, { dialect: 'sqlite', pushdown: false })
    // the pushdown rewrite of whatever compiles must not fail either (pushdown-differential.test.ts checks its answers)
    compileQuery(text, schema, { dialect: 'sqlite' })
    compileQuery(text, schema, { dialect: 'postgres' })
    compileQuery(text, schema, { dialect: 'duckdb' })
    return q
  } catch (e) {
    assert.ok(e instanceof KqlError, `not a KqlError for ${JSON.stringify(text)}: ${String(e)}`)
    assert.ok(e.position !== undefined, `KqlError without a position for ${JSON.stringify(text)}: ${e.message}`)
    assert.ok(!e.message.includes('internal error'), `internal error for ${JSON.stringify(text)}: ${e.message}`)
    return undefined
  }
}

async function checkRun(q: ReturnType<typeof compileQuery>, text: string): Promise<void> {
  try {
    await q.execute(source, { now: 17040672000000000n, rowCap: 50, seed: 1, signal: AbortSignal.timeout(500) })
  } catch (e) {
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) return
    assert.ok(e instanceof KqlError, `execute threw a non-KqlError for ${JSON.stringify(text)}: ${String(e)}`)
    assert.ok(!e.message.includes('internal error'), `internal error at run time for ${JSON.stringify(text)}: ${e.message}`)
  }
}

const VOCABULARY = [
  'T',
  'x',
  's',
  'ts',
  'd',
  'y',
  'n',
  'where',
  'project',
  'extend',
  'summarize',
  'by',
  'count',
  'distinct',
  'take',
  'top',
  'sort',
  'order',
  'asc',
  'desc',
  'nulls',
  'first',
  'last',
  'join',
  'kind',
  '=inner',
  '=leftouter',
  'on',
  '$left',
  '$right',
  'union',
  'let',
  'print',
  'range',
  'from',
  'to',
  'step',
  'datatable',
  'mv-expand',
  'mv-apply',
  'parse',
  'with',
  'make-series',
  'project-away',
  'project-rename',
  'lookup',
  'scan',
  'declare',
  'as',
  'getschema',
  'render',
  'timechart',
  'serialize',
  'and',
  'or',
  'not',
  'has',
  '!has',
  'contains',
  'startswith',
  'in',
  '!in',
  'in~',
  'has_any',
  'between',
  'matches',
  'regex',
  'true',
  'false',
  'null',
  'toscalar',
  'materialize',
  'view',
  'evaluate',
  'bag_unpack',
  'invoke',
  'typeof',
  'long',
  'string',
  '|',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ';',
  '=',
  '==',
  '!=',
  '=~',
  '<',
  '<=',
  '>',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '.',
  '..',
  ':',
  '=>',
  '!',
  '~',
  '@',
  '0',
  '1',
  '42',
  '-1',
  '1.5',
  '1e3',
  '0x1F',
  '1d',
  '2h',
  '30m',
  '"a"',
  "'b'",
  '@"c\\d"',
  '```m```',
  'datetime(2024-01-01)',
  'timespan(1d)',
  'dynamic([1,2])',
  'dynamic({"a":1})',
  'int(null)',
  'guid(00000000-0000-0000-0000-000000000000)',
  'count()',
  'sum(x)',
  'avg(x)',
  'make_list(s)',
  'bin(ts, 1h)',
  'strlen(s)',
  'tostring(x)',
  'now()',
  'ago(1d)',
  'iff(true, 1, 2)',
  'prev(x)',
  'row_number()',
  'pack_all()',
  'column_ifexists("x", 0)',
  'd.k',
  'd[0]',
  "['x']",
]

test('random text never escapes as anything but a positioned KqlError', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 120 }), (text) => {
      checkCompile(text)
    }),
    { numRuns: 400 },
  )
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (text) => {
      checkCompile(text)
    }),
    { numRuns: 200 },
  )
})

test('token soups of KQL words and symbols compile or fail with a positioned KqlError, and run when they compile', async () => {
  // few soups compile (most are not KQL); execution is exercised mainly by the pipeline property below
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 14 }),
      fc.boolean(),
      async (words, startWithTable) => {
        const text = (startWithTable ? ['T', '|', ...words] : words).join(' ')
        const q = checkCompile(text)
        if (q) await checkRun(q, text)
      },
    ),
    { numRuns: 1500 },
  )
})

test('well-formed pipelines over random operator chains compile and run', async () => {
  const operator = fc.constantFrom(
    'where x > 1',
    'where s has "a"',
    'where isnotnull(ts)',
    'project x, s',
    'extend y = x * 2',
    'extend z = strlen(s)',
    'summarize count() by s',
    'summarize n = count(), m = max(x)',
    'take 2',
    'top 1 by x',
    'sort by x asc',
    'distinct s',
    'mv-expand d',
    'serialize r = row_number()',
    'extend p = prev(x)',
    'count',
    'project-away d',
    'extend k = tostring(d.k)',
    'join kind=leftouter (T | project s, x2 = x) on s',
    'union (T)',
    'as U',
    'getschema',
  )
  await fc.assert(
    fc.asyncProperty(fc.array(operator, { minLength: 0, maxLength: 5 }), async (ops) => {
      const text = ['T', ...ops].join(' | ')
      let q: ReturnType<typeof compileQuery>
      try {
        q = compileQuery(text, schema, { dialect: 'sqlite', pushdown: false })
      } catch (e) {
        // an operator may need a column an earlier one removed: that must be a positioned semantic error
        assert.ok(e instanceof KqlError && e.kind === 'semantic' && e.position !== undefined, `${text}: ${String(e)}`)
        return
      }
      await checkRun(q, text)
    }),
    { numRuns: 300 },
  )
})
