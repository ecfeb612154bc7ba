import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SqlRefusalError } from '../../kql-error.js'
import { SQLITE_FUNCTIONS } from './sqlite-functions.js'

const fn = (name: string) => SQLITE_FUNCTIONS.find((f) => f.name === name)!.impl as (...args: unknown[]) => unknown

describe('sqlite functions of pushed-down statements', () => {
  it('kql_match answers as the evaluator, including JavaScript Unicode case rules', () => {
    const match = fn('kql_match')
    assert.equal(match('has', 'ERROR: disk full', 'error'), 1)
    assert.equal(match('has', 'errors', 'error'), 0)
    assert.equal(match('contains', 'İstanbul', 'i'), 1, 'İ lowers to i + U+0307')
    assert.equal(match('=~', '\u212A', 'k'), 1, 'KELVIN SIGN lowers to k')
    assert.equal(match('=~', 'straße', 'STRASSE'), 1, 'ß uppers to SS')
    assert.equal(match('startswith', 'Abc', 'a'), 1)
    assert.equal(match('hassuffix', 'disk-error', 'ror'), 1)
  })
  it('kql_utf16 orders by UTF-16 code units (a supplementary character before U+E000)', () => {
    const key = fn('kql_utf16') as (s: string) => Buffer
    assert.ok(Buffer.compare(key('😀'), key('\uE000')) < 0)
    assert.ok('😀' < '\uE000')
    assert.ok(Buffer.compare(key('a'), key('ab')) < 0)
  })
  it('kql_lower is JavaScript toLowerCase; kql_refuse throws a refusal', () => {
    assert.equal(fn('kql_lower')('ÄBC\u212A'), 'äbck')
    assert.throws(() => fn('kql_refuse')(), SqlRefusalError)
    assert.equal(SQLITE_FUNCTIONS.find((f) => f.name === 'kql_refuse')!.deterministic, false, 'never folded at prepare time')
  })
})
