import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { kqlTable, ROWID } from '../../../test/support/kql-schema.js'
import { compileQuery } from '../compile-query.js'
import type { SqlDialectName } from '../engine-types.js'
import type { PlanNode, SqlQuery } from '../plan/plan.js'
import type { KqlSchema } from '../schema.js'

const schema: KqlSchema = {
  tables: [
    kqlTable('Readings', 'data_r', { timestamp: 'datetime', sensor: 'string', value: 'real', n: 'long' }, { hiddenColumns: ROWID }),
    kqlTable('Sites', 'data_s', { sensor: 'string', site: 'string' }),
  ],
}

const DIALECTS: readonly SqlDialectName[] = ['sqlite', 'postgres', 'duckdb']

/** The executable plan as an outline: in-memory node kinds, with each SqlQuery's SQL. */
function outline(node: PlanNode): string {
  if (node.kind === 'SqlQuery') return `SQL[${node.sql}]`
  const children =
    'input' in node ? [node.input] : node.kind === 'Join' ? [node.left, node.right] : node.kind === 'Union' ? node.inputs : []
  return children.length ? `${node.kind}(${children.map(outline).join(', ')})` : node.kind
}

function statements(node: PlanNode): SqlQuery[] {
  if (node.kind === 'SqlQuery') return [node]
  const children =
    'input' in node ? [node.input] : node.kind === 'Join' ? [node.left, node.right] : node.kind === 'Union' ? node.inputs : []
  return children.flatMap(statements)
}

const plan = (query: string, dialect: SqlDialectName): PlanNode => compileQuery(query, schema, { dialect }).executable

describe('pushDown: one statement per pushable subtree, per dialect', () => {
  it('filter + summarize by bin + sort become one SELECT with bound parameters (now included)', () => {
    const q =
      'Readings | where timestamp > ago(1h) and sensor == "s1" | summarize n = count(), avg(value) by bin(timestamp, 5m) | sort by timestamp asc'
    const expected: Record<SqlDialectName, string> = {
      sqlite:
        'SQL[SELECT t2.c0 AS c0, t2.c1 AS c1, t2.c2 AS c2 FROM (SELECT (t1."timestamp" - ((t1."timestamp" % ? + ?) % ?)) AS c0, COUNT(*) AS c1, AVG((CASE WHEN typeof(t1."value") = \'text\' THEN kql_refuse() ELSE t1."value" END)) AS c2 FROM "data_r" AS t1 WHERE ((t1."timestamp" > (? - ?)) AND (t1."sensor" = ?)) GROUP BY (t1."timestamp" - ((t1."timestamp" % ? + ?) % ?))) AS t2 ORDER BY t2.c0 ASC NULLS FIRST]',
      postgres:
        'SQL[SELECT t2.c0 AS c0, t2.c1 AS c1, t2.c2 AS c2 FROM (SELECT (t1."timestamp" - ((t1."timestamp" % $1::bigint + $1::bigint) % $1::bigint)) AS c0, COUNT(*) AS c1, COALESCE(AVG(t1."value"), \'NaN\'::double precision) AS c2 FROM "data_r" AS t1 WHERE ((t1."timestamp" > ($2::bigint - $3::bigint)) AND (t1."sensor" = $4::text)) GROUP BY (t1."timestamp" - ((t1."timestamp" % $1::bigint + $1::bigint) % $1::bigint))) AS t2 ORDER BY t2.c0 ASC NULLS FIRST]',
      duckdb:
        'SQL[SELECT t2.c0 AS c0, t2.c1 AS c1, t2.c2 AS c2 FROM (SELECT (t1."timestamp" - ((t1."timestamp" % $1::BIGINT + $1::BIGINT) % $1::BIGINT)) AS c0, COUNT(*) AS c1, COALESCE(AVG(t1."value"), \'NaN\'::DOUBLE) AS c2 FROM "data_r" AS t1 WHERE ((t1."timestamp" > ($2::BIGINT - $3::BIGINT)) AND (t1."sensor" = $4::VARCHAR)) GROUP BY (t1."timestamp" - ((t1."timestamp" % $1::BIGINT + $1::BIGINT) % $1::BIGINT))) AS t2 ORDER BY t2.c0 ASC NULLS FIRST]',
    }
    for (const d of DIALECTS) assert.equal(outline(plan(q, d)), expected[d], d)
    const [pg] = statements(plan(q, 'postgres'))
    assert.deepEqual(pg!.params, [{ value: '3000000000' }, { now: true }, { value: '36000000000' }, { value: 's1' }])
    assert.deepEqual(pg!.nullIsNaN, [])
    const [lite] = statements(plan(q, 'sqlite'))
    assert.equal(lite!.params.length, 9, 'SQLite repeats a parameter for every ? it fills')
    assert.deepEqual(lite!.nullIsNaN, [2], 'SQLite has no NaN: AVG of no values comes back NULL and is read as NaN')
  })

  it('literals never become SQL text', () => {
    const hostile = `x'; DROP TABLE workspaces; --`
    for (const d of DIALECTS) {
      const [s] = statements(plan(`Readings | where sensor == "${hostile}" or sensor contains "${hostile}" | count`, d))
      assert.ok(s, d)
      assert.ok(!s.sql.includes('DROP'), s.sql)
      assert.ok(
        s.params.some((p) => 'value' in p && p.value === hostile),
        d,
      )
    }
  })

  it('a bin size that divides a day aligns to the epoch; others keep the 0001-01-01 origin', () => {
    const [day] = statements(plan('Readings | summarize count() by bin(timestamp, 1d)', 'postgres'))
    assert.ok(!day!.params.some((p) => 'value' in p && p.value === '-621355968000000000'), day!.sql)
    const [week] = statements(plan('Readings | summarize count() by bin(timestamp, 7d)', 'postgres'))
    assert.ok(
      week!.params.some((p) => 'value' in p && p.value === '-621355968000000000'),
      week!.sql,
    )
  })

  it('the pushable conjuncts of a filter go to SQL; the rest stays in memory', () => {
    const q = 'Readings | where timestamp > ago(1d) and sensor matches regex "^s[0-9]$" and n > 2'
    for (const d of DIALECTS) {
      const o = outline(plan(q, d))
      assert.match(o, /^Project\(Filter\(SQL\[SELECT .* WHERE \(\(t1\."timestamp" > .*\) AND \(t1\."n" > .*\)\)\]\)\)$/, `${d}: ${o}`)
    }
  })

  it('has: on SQLite LIKE finds the substring, then GLOB term boundaries on ASCII text (the registered function on other text); on PostgreSQL a regex over ASCII text, refusing other text', () => {
    const q = 'Readings | where sensor has "line1" | count'
    assert.match(
      outline(plan(q, 'sqlite')),
      /^SQL\[SELECT COUNT\(\*\) AS c0 FROM "data_r" AS t1 WHERE \(t1\."sensor" LIKE \? AND \(CASE WHEN length\(t1\."sensor"\) = octet_length\(t1\."sensor"\) THEN \(lower\(t1\."sensor"\) GLOB \? OR .*\) ELSE kql_match\('has', t1\."sensor", \?\) END\)\)\]$/,
    )
    const [lite] = statements(plan(q, 'sqlite'))
    assert.deepEqual(lite!.params, [
      { value: '%line1%' },
      { value: 'line1' },
      { value: 'line1[^0-9a-z]*' },
      { value: '*[^0-9a-z]line1' },
      { value: '*[^0-9a-z]line1[^0-9a-z]*' },
      { value: 'line1' },
    ])
    const [withS] = statements(plan('Readings | where sensor has "disk" | count', 'sqlite'))
    assert.ok(
      withS!.params.some((p) => 'value' in p && p.value === '*[\u017F\u212A]*'),
      'a term with k and s also asks the function when the text holds \u212A or \u017F',
    )
    const [contains] = statements(plan('Readings | where sensor contains "out" | count', 'sqlite'))
    assert.match(
      contains!.sql,
      /WHERE \(t1\."sensor" LIKE \?\)$/,
      'no letter of the needle is reached by a non-ASCII case mapping: LIKE alone is exact',
    )
    const [withI] = statements(plan('Readings | where sensor contains "ti" | count', 'sqlite'))
    assert.match(
      withI!.sql,
      /WHERE \(t1\."sensor" LIKE \? OR \(instr\(t1\."sensor", \?\) > 0 AND kql_match\('contains', t1\."sensor", \?\)\)\)$/,
      'U+0130 lowers to i + U+0307: only a needle ending in i needs it',
    )
    const [withK] = statements(plan('Readings | where sensor contains "kelvin" | count', 'sqlite'))
    assert.match(
      withK!.sql,
      /WHERE \(t1\."sensor" LIKE \? OR \(octet_length\(t1\."sensor"\) >= 2 AND instr\(t1\."sensor", \?\) > 0 AND kql_match\('contains', t1\."sensor", \?\)\)\)$/,
    )
    assert.match(statements(plan('Readings | where sensor contains "time" | count', 'sqlite'))[0]!.sql, /WHERE \(t1\."sensor" LIKE \?\)$/)
    const [pg] = statements(plan(q, 'postgres'))
    assert.match(
      pg!.sql,
      /WHERE \(CASE WHEN octet_length\(t1\."sensor"\) = length\(t1\."sensor"\) THEN t1\."sensor" ~ \$1::text ELSE 1 \/ \(length\(t1\."sensor"\) - length\(t1\."sensor"\)\) = 1 END\)$/,
    )
    assert.deepEqual(pg!.params, [
      {
        value:
          '(^|[^0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz])[lL][iI][nN][eE]1($|[^0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz])',
      },
    ])
    assert.match(outline(plan('Readings | where sensor has "Über" | count', 'postgres')), /^Count\(Filter\(SQL\[/)
  })

  it('case-insensitive operators on PostgreSQL: exact ASCII case mappings for ASCII needles, memory otherwise', () => {
    assert.match(
      outline(plan('Readings | where sensor contains "AbC"', 'postgres')),
      /^SQL\[.*strpos\(translate\(t1\."sensor", U&'ABCDEFGHIJKLMNOPQRSTUVWXYZ\\212A', 'abcdefghijklmnopqrstuvwxyzk'\), \$1::text\) > 0.*\]$/,
    )
    assert.match(
      outline(plan('Readings | where sensor contains "Hi"', 'postgres')),
      /strpos\(replace\(translate\(t1\."sensor", U&'ABCDEFGHIJKLMNOPQRSTUVWXYZ\\212A', 'abcdefghijklmnopqrstuvwxyzk'\), U&'\\0130', U&'i\\0307'\), \$1::text\) > 0/,
    )
    assert.deepEqual(statements(plan('Readings | where sensor contains "AbC"', 'postgres'))[0]!.params, [{ value: 'abc' }])
    assert.match(outline(plan('Readings | where sensor contains "Über"', 'postgres')), /^Project\(Filter\(SQL/)
    assert.match(outline(plan('Readings | where sensor =~ "Über"', 'sqlite')), /kql_match\('=~'/)
  })

  it('string ordering: by UTF-16 code units through kql_utf16() on SQLite; in memory on PostgreSQL', () => {
    assert.match(
      outline(plan('Readings | top 3 by sensor asc', 'sqlite')),
      /^SQL\[.*ORDER BY kql_utf16\(t1\."sensor"\) ASC NULLS LAST LIMIT \?\]$/,
    )
    assert.match(outline(plan('Readings | top 3 by sensor asc', 'postgres')), /^Project\(Top\(SQL\[/)
    assert.match(
      outline(plan('Readings | top 3 by value desc', 'postgres')),
      /ORDER BY \(CASE WHEN t1\."value" IS NULL THEN 2 WHEN \(t1\."value" = 'NaN'::double precision\) THEN 1 ELSE 0 END\) ASC NULLS LAST, t1\."value" DESC NULLS LAST LIMIT \$1::bigint\]$/,
    )
  })

  it('the root statement reads no hidden column; a column the query names is read', () => {
    assert.doesNotMatch(outline(plan('Readings | where n > 1', 'sqlite')), /_rowid/)
    assert.match(
      outline(plan('Readings | where n > 1 | take 3', 'sqlite')),
      /^SQL\[SELECT t1\."timestamp" AS c0, .* AS c3 FROM "data_r" AS t1 WHERE \(t1\."n" > \?\) LIMIT \?\]$/,
    )
    assert.match(outline(plan('Readings | where n > 1 | summarize by n | where n > 5', 'sqlite')), /^SQL\[/)
    assert.match(outline(plan('Readings | where n > 1 | project _rowid', 'sqlite')), /t1\."_rowid" AS c0/)
  })

  it('joins: inner and lookup of pushable sides in SQL; innerunique only when the left side is unique on the keys', () => {
    assert.match(
      outline(plan('Readings | join kind=inner (Sites) on sensor | count', 'postgres')),
      /^SQL\[SELECT COUNT\(\*\) AS c0 FROM \(SELECT .*\) AS t\d+ JOIN \(SELECT .*\) AS t\d+ ON t\d+\.c1 = t\d+\.c0\]$/,
    )
    assert.match(outline(plan('Readings | lookup (Sites) on sensor', 'sqlite')), /LEFT JOIN/)
    assert.match(outline(plan('Readings | join (Sites) on sensor', 'sqlite')), /^Join\(SQL\[.*\], SQL\[.*\]\)$/)
    assert.match(outline(plan('Readings | summarize max(value) by sensor | join (Sites) on sensor', 'sqlite')), /^SQL\[.* JOIN .*\]$/)
    assert.match(outline(plan('Readings | join kind=leftanti (Sites) on sensor', 'postgres')), /WHERE NOT EXISTS \(SELECT 1 FROM/)
  })

  it('a statement under an in-memory operator reads only the columns that operator needs', () => {
    assert.match(
      outline(plan('Readings | where n > 0 | make-series avg(value) on timestamp step 1h', 'sqlite')),
      /^MakeSeries\(SQL\[SELECT t1\."timestamp" AS c0, NULL AS c1, \(CASE WHEN typeof\(t1\."value"\) = 'text' THEN kql_refuse\(\) ELSE t1\."value" END\) AS c2, NULL AS c3, NULL AS c4 FROM "data_r" AS t1 WHERE \(t1\."n" > \?\)\]\)$/,
    )
    assert.match(
      outline(plan('Readings | where sensor matches regex "a" and n > 0 | project value', 'postgres')),
      /^Project\(Filter\(SQL\[SELECT CAST\(NULL AS bigint\) AS c0, t1\."sensor" AS c1, t1\."value" AS c2, CAST\(NULL AS bigint\) AS c3, CAST\(NULL AS bigint\) AS c4 FROM/,
    )
  })

  it('operators with no exact SQL form run in memory over the statement below them', () => {
    assert.match(
      outline(plan('Readings | where n > 0 | extend len = strlen(sensor) | summarize count() by len', 'postgres')),
      /^Summarize\(Project\(SQL\[SELECT .* WHERE \(t1\."n" > \$1::bigint\)\]\)\)$/,
    )
    assert.match(outline(plan('Readings | make-series avg(value) on timestamp step 1h', 'sqlite')), /^MakeSeries\(SQL\[/)
    assert.match(outline(plan('Readings | summarize make_list(value) by sensor', 'sqlite')), /^Summarize\(SQL\[/)
  })
})
