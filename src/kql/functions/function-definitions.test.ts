/**
 * The one table of parameter kinds (issue 19 item 6): scalar and aggregate definitions declare
 * their signatures, and arity and type errors come from function-definitions.ts with one wording.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type { KqlType } from '../types.js'
import type { ArgInfo } from './function-types.js'
import { lookupAggregate, lookupScalar } from './registry.js'

const args = (...types: KqlType[]): ArgInfo[] => types.map((type, i) => ({ type, text: `a${i}` }))

/** The semantic error's message when binding `name` with arguments of `types`. */
function scalarError(name: string, ...types: KqlType[]): string {
  try {
    lookupScalar(name)!.bind(args(...types))
  } catch (e) {
    assert.ok(e instanceof KqlError && e.kind === 'semantic', String(e))
    return e.message
  }
  assert.fail(`${name}(${types.join(', ')}) bound`)
}

function aggregateError(name: string, types: readonly KqlType[], star = false): string {
  try {
    lookupAggregate(name)!.bind(args(...types), { star, inputColumns: [] })
  } catch (e) {
    assert.ok(e instanceof KqlError && e.kind === 'semantic', String(e))
    return e.message
  }
  assert.fail(`${name}(${types.join(', ')}) bound`)
}

describe('declared signatures', () => {
  it('arity errors say the declared range', () => {
    assert.equal(scalarError('strlen', 'string', 'string'), 'strlen(): expects 1 argument, got 2')
    assert.equal(scalarError('round', 'real', 'long', 'long'), 'round(): expects 1 to 2 arguments, got 3')
    assert.equal(scalarError('pack_array'), 'pack_array(): expects at least 1 argument, got 0')
    assert.equal(aggregateError('percentile', ['long']), 'percentile(): expects 2 arguments, got 1')
  })

  it('kind errors use one wording for every family (impl and bind specs alike)', () => {
    // rotate (impl spec) and array_shift (bind spec) read the same kind the same way
    const expected = 'argument #2 (a1) must be an integer (int or long), got string'
    assert.equal(scalarError('array_rotate_left', 'dynamic', 'string'), `array_rotate_left(): ${expected}`)
    assert.equal(scalarError('array_shift_left', 'dynamic', 'string'), `array_shift_left(): ${expected}`)
    assert.equal(scalarError('datetime_add', 'string', 'long', 'string'), 'datetime_add(): argument #3 (a2) must be a datetime, got string')
  })

  it("a repeat group checks bag_pack's keys and leaves its values free", () => {
    assert.doesNotThrow(() => lookupScalar('bag_pack')!.bind(args('string', 'long', 'string', 'datetime')))
    assert.equal(scalarError('bag_pack', 'string', 'long', 'long', 'long'), 'bag_pack(): argument #3 (a2) must be a string, got long')
  })

  it("an aggregate's predicate and kinds come from the same table", () => {
    assert.equal(aggregateError('countif', ['long']), 'countif(): predicate (a0) must be a bool, got long')
    assert.equal(aggregateError('sumif', ['long', 'string']), 'sumif(): predicate (a1) must be a bool, got string')
    assert.equal(aggregateError('sum', ['string']), 'sum(): argument #1 (a0) must be a number or timespan, got string')
    assert.equal(aggregateError('max', ['dynamic']), 'max(): argument #1 (a0) must be a scalar of an orderable type, got dynamic')
  })

  it('take_any(*) needs no explicit argument; take_any() without * does', () => {
    assert.doesNotThrow(() => lookupAggregate('take_any')!.bind([], { star: true, inputColumns: [{ name: 'x', type: 'long' }] }))
    assert.equal(aggregateError('take_any', []), 'take_any(): expects at least 1 argument, got 0')
  })
})
