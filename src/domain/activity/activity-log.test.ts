import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { canonicalJson } from '../../shared/canonical-json.js'
import { jsonSafe } from './activity-log.js'

describe('decision details are made plain JSON before they are hashed', () => {
  it('drops undefined members, keeps array positions, converts bigints, dates, bytes, maps and sets', () => {
    const details = {
      a: undefined,
      b: [1, undefined, 'x'],
      tick: 17672256001234567n,
      small: 42n,
      at: new Date('2026-01-01T00:00:00Z'),
      bytes: Buffer.from('hi'),
      nan: Number.NaN,
      map: new Map([['k', 1]]),
      set: new Set([2, 3]),
      fn: () => 1,
      nested: { keep: true, drop: undefined, deeper: [{ v: 1n }] },
    }
    const safe = jsonSafe(details)
    assert.deepEqual(safe, {
      b: [1, null, 'x'],
      tick: '17672256001234567',
      small: 42,
      at: '2026-01-01T00:00:00.000Z',
      bytes: 'aGk=',
      nan: null,
      map: { k: 1 },
      set: [2, 3],
      nested: { keep: true, deeper: [{ v: 1 }] },
    })
    assert.doesNotThrow(() => canonicalJson(safe))
    assert.throws(() => canonicalJson(details), /undefined|bigint|not a JSON value/i)
  })

  it('refuses a cycle (a programming error), but not a value seen twice', () => {
    const shared = { x: 1 }
    assert.deepEqual(jsonSafe({ a: shared, b: shared }), { a: { x: 1 }, b: { x: 1 } })
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    assert.throws(() => jsonSafe(cyclic), /cycle/)
  })
})
