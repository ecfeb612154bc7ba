import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backoffDelay } from './backoff.js'

describe('connector backoff', () => {
  it('doubles from 1 s and stays within [d/2, d]', () => {
    assert.equal(
      backoffDelay(1, undefined, () => 1),
      1000,
    )
    assert.equal(
      backoffDelay(1, undefined, () => 0),
      500,
    )
    assert.equal(
      backoffDelay(2, undefined, () => 1),
      2000,
    )
    assert.equal(
      backoffDelay(4, undefined, () => 1),
      8000,
    )
  })
  it('never exceeds 60 s, however many failures', () => {
    assert.equal(
      backoffDelay(7, undefined, () => 1),
      60_000,
    )
    assert.equal(
      backoffDelay(10_000, undefined, () => 1),
      60_000,
    )
    assert.equal(
      backoffDelay(10_000, undefined, () => 0),
      30_000,
    )
  })
})
