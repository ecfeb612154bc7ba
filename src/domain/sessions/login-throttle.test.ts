import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_LOGIN_LIMITS, throttleKeys, throttleVerdict } from './login-throttle.js'

describe('sign-in throttle', () => {
  const now = 1_000_000_000
  it('keys account names case-insensitively and addresses as given', () => {
    assert.deepEqual(throttleKeys('  Admin@Acme ', '10.0.0.1'), { account: 'account:admin@acme', address: 'address:10.0.0.1' })
  })

  it('allows below the limits and refuses at them, until the oldest counted failure leaves the window', () => {
    assert.deepEqual(
      throttleVerdict(DEFAULT_LOGIN_LIMITS, { account: { count: 4, oldest: now - 60_000 }, address: { count: 19, oldest: now } }, now),
      { allowed: true },
    )
    assert.deepEqual(throttleVerdict(DEFAULT_LOGIN_LIMITS, { account: { count: 5, oldest: now - 60_000 }, address: undefined }, now), {
      allowed: false,
      limitedBy: 'account',
      retryAfterMs: 14 * 60_000,
    })
    assert.deepEqual(
      throttleVerdict(DEFAULT_LOGIN_LIMITS, { account: undefined, address: { count: 20, oldest: now - 15 * 60_000 + 10 } }, now),
      { allowed: false, limitedBy: 'address', retryAfterMs: 1000 },
    )
    assert.deepEqual(throttleVerdict(DEFAULT_LOGIN_LIMITS, { account: undefined, address: undefined }, now), { allowed: true })
  })
})
