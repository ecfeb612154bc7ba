import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { toColumnValue, typeRows } from './row-validation.js'

describe('ingest: JSON integers beyond 2^53 (bigints from the exact body parser) per column type', () => {
  it('a long keeps every digit; a real or decimal takes the nearest double, as any JSON number', () => {
    assert.equal(toColumnValue('long', 9007199254740993n), 9007199254740993n)
    assert.equal(toColumnValue('real', 9007199254740993n), 9007199254740992)
    assert.equal(toColumnValue('real', -9223372036854775808n), -(2 ** 63))
    assert.equal(toColumnValue('decimal', 9007199254740993n), 9007199254740992)
  })

  it('an int says the value does not fit 32 bits, not that it is not a whole number', () => {
    assert.throws(() => toColumnValue('int', 9007199254740993n), /9007199254740993 does not fit an int \(32-bit\)/)
  })
})

describe('ingest: a column named like an Object member', () => {
  const columns = [
    { name: 'timestamp', type: 'datetime' },
    { name: 'constructor', type: 'dynamic' },
    { name: 'toString', type: 'string' },
    { name: 'valueOf', type: 'long' },
  ] as const

  it('is missing from a row like any other column (null, "" for a string), never the inherited member', () => {
    const { rows, problems } = typeRows(columns, [{ timestamp: '2026-01-01T00:00:00Z' }])
    assert.deepEqual(problems, [])
    assert.deepEqual(rows[0]!.slice(1), [null, '', null])
  })

  it('keeps its own value when the row has it', () => {
    const { rows } = typeRows(columns, [{ timestamp: '2026-01-01T00:00:00Z', constructor: { a: 1 }, toString: 'x', valueOf: 7 }])
    assert.deepEqual(rows[0]!.slice(1), [{ a: 1 }, 'x', 7])
  })
})
