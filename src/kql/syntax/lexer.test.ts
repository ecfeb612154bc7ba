import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import { Lexer, type Token } from './lexer.js'

function tokens(text: string): Token[] {
  const lx = new Lexer(text)
  const out: Token[] = []
  for (;;) {
    const t = lx.next()
    if (t.kind === 'eof') return out
    out.push(t)
  }
}

const kinds = (text: string): string[] => tokens(text).map((t) => `${t.kind}:${t.text}`)

function lexError(text: string): KqlError {
  try {
    tokens(text)
  } catch (e) {
    assert.ok(e instanceof KqlError)
    return e
  }
  assert.fail(`expected a lexing error for ${text}`)
}

describe('lexer', () => {
  it('reads identifiers, operators and punctuation, skipping comments', () => {
    assert.deepEqual(kinds('T | where x >= 1 // comment\n and y != "a"'), [
      'ident:T',
      'punct:|',
      'ident:where',
      'ident:x',
      'punct:>=',
      'long:1',
      'ident:and',
      'ident:y',
      'punct:!=',
      'string:a',
    ])
    assert.deepEqual(kinds('a==b =~ c !~ d <> e => f .. g'), [
      'ident:a',
      'punct:==',
      'ident:b',
      'punct:=~',
      'ident:c',
      'punct:!~',
      'ident:d',
      'punct:<>',
      'ident:e',
      'punct:=>',
      'ident:f',
      'punct:..',
      'ident:g',
    ])
    assert.deepEqual(kinds('$left.Key'), ['ident:$left', 'punct:.', 'ident:Key'])
  })

  it('reads longs, reals, exponents and hexadecimal', () => {
    const t = tokens('42 1.5 1e3 2.5E-2 10. 0x1F .5')
    assert.deepEqual(
      t.map((x) => [x.kind, x.value]),
      [
        ['long', 42],
        ['real', 1.5],
        ['real', 1000],
        ['real', 0.025],
        ['real', 10],
        ['long', 31],
        ['real', 0.5],
      ],
    )
    // 1..5 is two longs around '..', not a real
    assert.deepEqual(kinds('1..5'), ['long:1', 'punct:..', 'long:5'])
  })

  it('reads timespan literals in every unit as exact ticks', () => {
    const t = tokens('1d 2h 30m 10s 100ms 1tick 3microseconds 1.5h 0min 2sec')
    assert.deepEqual(
      t.map((x) => x.value),
      [864000000000n, 72000000000n, 18000000000n, 100000000n, 1000000n, 1n, 30n, 54000000000n, 0n, 20000000n],
    )
    assert.ok(t.every((x) => x.kind === 'timespan'))
  })

  it('decodes strings: escapes, verbatim, multi-line, obfuscated', () => {
    assert.deepEqual(
      tokens(String.raw`'a\'b\n' "c\"d\\" @'e''f' @"g\h"`).map((t) => t.text),
      ["a'b\n", 'c"d\\', "e'f", 'g\\h'],
    )
    assert.deepEqual(
      tokens('```line1\nline2```').map((t) => t.text),
      ['line1\nline2'],
    )
    assert.deepEqual(
      tokens(`h'secret' H"x" h@'y\\z'`).map((t) => [t.kind, t.text]),
      [
        ['string', 'secret'],
        ['string', 'x'],
        ['string', 'y\\z'],
      ],
    )
    assert.deepEqual(
      tokens(String.raw`'\u0041\x42'`).map((t) => t.text),
      ['AB'],
    )
  })

  it("reads ['name'] as a bracketed identifier but [1] as punctuation", () => {
    assert.deepEqual(kinds(`['my col'] x[0] ["q"]`), ['quotedIdent:my col', 'ident:x', 'punct:[', 'long:0', 'punct:]', 'quotedIdent:q'])
  })

  it('positions errors at line and column', () => {
    const e1 = lexError('print x = 1\n  | extend y = "open')
    assert.equal(e1.kind, 'syntax')
    assert.deepEqual([e1.position?.line, e1.position?.column], [2, 16])
    assert.match(e1.message, /^line 2, column 16: unterminated string/)
    const e2 = lexError('print 12abc')
    assert.match(e2.message, /line 1, column 7: invalid literal '12abc'/)
    const e3 = lexError('print #')
    assert.match(e3.message, /line 1, column 7: unexpected character '#'/)
    const e4 = lexError('print ```abc')
    assert.match(e4.message, /unterminated multi-line string/)
  })

  it('refuses an integer literal beyond 64 bits with its position, instead of rounding it', () => {
    assert.match(
      lexError('T | take 99999999999999999999').message,
      /line 1, column 10: the integer literal 99999999999999999999 is out of range for long/,
    )
    assert.equal(tokens('9223372036854775807')[0]!.kind, 'long')
    assert.equal(tokens('-9223372036854775808')[1]!.kind, 'long')
    assert.equal(tokens('99999999999999999999.0')[0]!.kind, 'real')
  })
})
