import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileQuery } from '../compile-query.js'
import { KqlError } from '../kql-error.js'
import { visitPlan } from '../plan/plan-walk.js'
import { compileRegex } from './regex.js'

describe('compileRegex: RE2 syntax', () => {
  const cases: [string, string, boolean][] = [
    ['(?i)abc', 'xABCx', true],
    ['[[:alpha:]]+$', 'abc', true],
    ['^\\pL+$', 'éa', true],
    ['a{', 'a{', true],
    ['\\Q.*\\E', 'a.*b', true],
    ['\\Q.*\\E', 'ab', false],
    ['^[\\w-]+$', 'a-b_c', true],
    ['\\Aab\\z', 'ab', true],
    ['\\Aab\\z', 'ab\n', false],
    ['{"name":', '{"name":1}', true],
    ['a\\-b', 'a-b', true],
    ['x\\"y', 'x"y', true],
    ['(?P<y>\\d{4})-(?P<m>\\d{2})', '2024-05', true],
    ['\\p{Greek}', 'α', true],
    ['[^]a]', 'b', true],
    ['(?s)a.b', 'a\nb', true],
    ['a.b', 'a\nb', false],
    ['\\x{41}', 'A', true],
    ['}', '}', true],
    [']', ']', true],
  ]
  for (const [pattern, text, want] of cases) {
    it(`${pattern} on ${JSON.stringify(text)}`, () => assert.equal(compileRegex(pattern).test(text), want))
  }
  it('keeps named groups and counts capture groups', () => {
    const m = compileRegex('(?P<y>\\d{4})-(?P<m>\\d{2})').exec('2024-05')
    assert.equal(m?.groups?.['m'], '05')
    assert.equal(compileRegex('(a)(b)(?:c)').groupCount, 2)
  })
  it('rejects invalid patterns with a KqlError naming the function', () => {
    assert.throws(
      () => compileRegex('(', '', 'extract'),
      (e: unknown) => e instanceof KqlError && /extract\(\)/.test(e.message),
    )
  })
})

describe('compileRegex: RE2 semantics', () => {
  it('matches nested quantifiers in linear time (no catastrophic backtracking)', () => {
    // a backtracking engine takes minutes on this; RE2 answers at once
    assert.equal(compileRegex('^(a+)+$').test(`${'a'.repeat(100_000)}!`), false)
    assert.equal(compileRegex('(x+x+)+y').exec('x'.repeat(50_000)), null)
  })
  it('supports the ungreedy flag U, as `parse kind=regex flags=U` needs', () => {
    assert.equal(compileRegex('a+', 'U').exec('aaa')?.[0], 'a')
    assert.equal(compileRegex('a+?', 'U').exec('aaa')?.[0], 'aaa')
    assert.equal(compileRegex('(?U)a+').exec('aaa')?.[0], 'a')
  })
  it('applies flags i, m and s to the whole pattern', () => {
    assert.equal(compileRegex('abc', 'i').test('xABC'), true)
    assert.equal(compileRegex('^b$', 'm').test('a\nb'), true)
    assert.equal(compileRegex('a.b', 's').test('a\nb'), true)
    assert.throws(() => compileRegex('a', 'g', 'extract'), /extract\(\): unknown regex flags/)
  })
  it('counts offsets in UTF-16 units and keeps unset groups undefined', () => {
    const m = compileRegex('(\\d+)|(z)').exec('😀12')
    assert.equal(m?.index, 2)
    assert.deepEqual([...m!], ['12', '12', undefined])
  })
  it("finds successive matches with RE2's rule for empty matches", () => {
    assert.deepEqual(
      compileRegex('a*')
        .matchAll('baaacd')
        .map((m) => [m.index, m[0]]),
      [
        [0, ''],
        [1, 'aaa'],
        [5, ''],
        [6, ''],
      ],
    )
  })
  it('uses ASCII \\w, \\d and \\b, as RE2 does', () => {
    assert.equal(compileRegex('^\\w$').test('é'), false)
    assert.equal(compileRegex('\\d').test('٣'), false)
    assert.equal(compileRegex('\\pN').test('٣'), true)
  })
  it('rejects what RE2 does not support (lookaround, backreferences) with a KqlError', () => {
    assert.throws(() => compileRegex('a(?=b)', '', 'extract'), KqlError)
    assert.throws(() => compileRegex('(a)\\1', '', 'extract'), KqlError)
  })
})

describe('regexes never reach the database', () => {
  const schema = { tables: [{ name: 'T', sqlName: 't', columns: [{ name: 's', type: 'string' as const }] }] }
  for (const dialect of ['sqlite', 'postgres'] as const) {
    it(`${dialect}: a user's pattern is evaluated in memory with RE2, never pushed down`, () => {
      const pattern = '^(a+)+$'
      for (const text of [
        `T | where s matches regex "${pattern}"`,
        `T | where extract("${pattern}", 0, s) != ""`,
        `T | where s like "%a%a%b"`,
        `T | where countof(s, "${pattern}", "regex") > 0`,
      ]) {
        const q = compileQuery(text, schema, { dialect })
        const sql: string[] = []
        visitPlan(q.executable, (node) => {
          if (node.kind === 'SqlQuery') sql.push(`${node.sql} ${JSON.stringify(node.params)}`)
        })
        assert.ok(sql.length > 0, 'the scan is still pushed')
        for (const statement of sql) {
          assert.doesNotMatch(statement, /a\+|%a%a%b|REGEXP|~/, `${dialect}: ${text} → ${statement}`)
        }
      }
    })
  }
})
