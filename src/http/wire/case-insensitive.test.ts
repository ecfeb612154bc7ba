import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidInputError } from '../../domain/errors.js'
import { normaliseKeys } from './case-insensitive.js'

describe('normaliseKeys', () => {
  it('renames keys to their declared spelling, whatever the case', () => {
    assert.deepEqual(normaliseKeys({ query: 'T', SCOPEKEY: 'k' }, ['Query', 'ScopeKey']), { Query: 'T', ScopeKey: 'k' })
  })

  it('refuses two spellings of one property', () => {
    assert.throws(
      () => normaliseKeys({ query: 'a', Query: 'b' }, ['Query']),
      (e) => e instanceof InvalidInputError && /"query" and "Query" name the same property/.test(e.message),
    )
  })

  it("passes keys named like Object's own members through for the schema to judge (no false 'same property')", () => {
    const body = { constructor: 1, toString: 2, hasOwnProperty: 3, valueOf: 4 }
    assert.deepEqual(normaliseKeys(body, ['Query']), body)
  })
})
