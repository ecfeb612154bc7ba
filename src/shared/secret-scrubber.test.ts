import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { MIN_SECRET_LENGTH, registerSecret, scrub } from './secret-scrubber.js'

describe('secret scrubber', () => {
  it('replaces a registered secret as written and in its JSON, URL, base64 and hex forms', () => {
    const secret = `pw/${randomBytes(6).toString('hex')}"x y`
    registerSecret(secret)
    const b = Buffer.from(secret)
    const lines = [
      `connect failed for postgres://u:${secret}@h/db`,
      JSON.stringify({ msg: `bad password ${secret}` }),
      `url=postgres://u:${encodeURIComponent(secret)}@h/db`,
      `basic ${b.toString('base64')}`,
      `hex ${b.toString('hex')}`,
    ]
    for (const line of lines) {
      const out = scrub(line)
      assert.ok(out.includes('[REDACTED]'), out)
      for (const form of [
        secret,
        JSON.stringify(secret).slice(1, -1),
        encodeURIComponent(secret),
        b.toString('base64'),
        b.toString('hex'),
      ]) {
        assert.equal(out.includes(form), false, `${form} in ${out}`)
      }
    }
  })

  it('leaves text without secrets unchanged and ignores values too short to be secrets', () => {
    registerSecret('ab')
    assert.ok(MIN_SECRET_LENGTH > 2)
    assert.equal(scrub('a plain line about ab and cd'), 'a plain line about ab and cd')
  })

  it('replaces a longer secret whole when it contains a shorter registered one', () => {
    const short = `s${randomBytes(4).toString('hex')}`
    const long = `${short}-and-more`
    registerSecret(short)
    registerSecret(long)
    assert.equal(scrub(`x ${long} y ${short} z`), 'x [REDACTED] y [REDACTED] z')
  })
})
