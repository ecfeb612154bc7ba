import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCookies, serializeCookie } from './cookies.js'

describe('portal cookies', () => {
  it('parses a Cookie header; the first occurrence wins; malformed values are skipped', () => {
    const cookies = parseCookies('a=1; b="two"; a=3; c=%E0%A4%A; =x; d')
    assert.deepEqual(
      [...cookies],
      [
        ['a', '1'],
        ['b', 'two'],
      ],
    )
    assert.equal(parseCookies(undefined).size, 0)
  })

  it('always sets HttpOnly and SameSite=Strict; Secure only when asked', () => {
    assert.equal(serializeCookie('s', 'abc_-1', { path: '/portal', secure: false }), 's=abc_-1; Path=/portal; HttpOnly; SameSite=Strict')
    assert.equal(
      serializeCookie('s', '', { path: '/portal', secure: true, maxAge: 0 }),
      's=; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
    )
    assert.throws(() => serializeCookie('s', 'a;b', { path: '/', secure: false }))
  })
})
