import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { relativeText, timeTag, utcText } from './format.js'

describe('portal time formatting', () => {
  const now = Date.parse('2026-03-01T12:00:00Z')
  it('shows UTC text and relative hints', () => {
    assert.equal(utcText(now), '2026-03-01 12:00 UTC')
    assert.equal(relativeText(now + 10_000, now), 'just now')
    assert.equal(relativeText(now + 15 * 60_000, now), 'in 15 minutes')
    assert.equal(relativeText(now - 60_000, now), '1 minute ago')
    assert.equal(relativeText(now + 8 * 3_600_000, now), 'in 8 hours')
    assert.equal(relativeText(now + 3_600_000 - 999, now), 'in 1 hour')
    assert.equal(relativeText(now + 50 * 60_000, now), 'in 50 minutes')
    assert.equal(relativeText(now - 36 * 3_600_000, now), '2 days ago')
    assert.equal(relativeText(now + 30 * 86_400_000, now), 'in 30 days')
    assert.equal(timeTag(undefined, now).text, '<span class="muted">never</span>')
    assert.equal(
      timeTag(now, now).text,
      '<time datetime="2026-03-01T12:00:00.000Z">2026-03-01 12:00 UTC</time> <span class="muted">(just now)</span>',
    )
  })
})
