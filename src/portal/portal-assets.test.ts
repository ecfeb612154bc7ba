import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SERIES_COLOURS } from './line-chart.js'
import { PORTAL_CSS, PORTAL_JS } from './portal-assets.js'

/** WCAG 2.x contrast ratio of two #rrggbb colours. */
function contrast(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, bl] = [1, 3, 5]
      .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!
  }
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (hi! + 0.05) / (lo! + 0.05)
}

function variable(name: string): string {
  const match = new RegExp(`--${name}: (#[0-9a-fA-F]{6})`).exec(PORTAL_CSS.body)
  assert.ok(match, `--${name} is defined`)
  return match[1]!
}

function colourOf(selector: string): string {
  const match = new RegExp(`${selector.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\{[^}]*?color: (#[0-9a-fA-F]{6})`).exec(PORTAL_CSS.body)
  assert.ok(match, `${selector} has a colour`)
  return match[1]!
}

describe('portal assets', () => {
  it('text meets WCAG AA contrast (4.5:1) on its backgrounds', () => {
    const white = '#ffffff'
    const page = variable('bg')
    const code = '#f3f5f8'
    const pairs: [string, string, string][] = [
      ['ink on page', variable('ink'), page],
      ['muted on page', variable('muted'), page],
      ['muted on panel', variable('muted'), white],
      ['link on panel', variable('brand'), white],
      ['link on page', variable('brand'), page],
      ['button text', white, variable('brand')],
      ['danger on panel', variable('danger'), white],
      ['danger on error alert', variable('danger'), '#fdeceb'],
      ['ok badge', variable('ok'), '#e9f5ec'],
      ['top bar text', '#dfe6ee', variable('header')],
      ['diff added line', colourOf('.diff-add'), '#e6f4ea'],
      ['diff removed line', colourOf('.diff-del'), '#fcebea'],
      ['diff unchanged line', variable('muted'), '#fbfcfd'],
      ['pending badge', colourOf('.badge.open, .badge.pending'), '#fff6e0'],
      ['rejected badge', variable('danger'), '#fdeceb'],
      ['ink on a broken record row', variable('ink'), '#fdeceb'],
      ...(['.k-kw', '.k-fn', '.k-str', '.k-num', '.k-cmt', '.k-pipe', '.k-op'] as const).map((s): [string, string, string] => [
        `${s} on code`,
        colourOf(s),
        code,
      ]),
    ]
    for (const [what, fg, bg] of pairs) assert.ok(contrast(fg, bg) >= 4.5, `${what}: ${fg} on ${bg} is ${contrast(fg, bg).toFixed(2)}:1`)
  })

  it('chart lines are at least 3:1 against the white panel (non-text contrast)', () => {
    for (const colour of SERIES_COLOURS) assert.ok(contrast(colour, '#ffffff') >= 3, `${colour} ${contrast(colour, '#ffffff').toFixed(2)}`)
  })

  it('are served under content-hashed names and reference nothing outside the portal', () => {
    assert.match(PORTAL_CSS.name, /^portal\.[0-9a-f]{10}\.css$/)
    assert.match(PORTAL_JS.name, /^portal\.[0-9a-f]{10}\.js$/)
    assert.doesNotMatch(PORTAL_CSS.body + PORTAL_JS.body, /https?:\/\/|@import|url\(/)
  })
})
