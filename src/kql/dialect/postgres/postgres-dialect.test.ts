import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { postgresDialect } from './postgres-dialect.js'

/** Every Unicode scalar value outside ASCII. */
function* nonAscii(): Generator<string> {
  for (let cp = 0x80; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) yield String.fromCodePoint(cp)
}

describe('postgres dialect: the case mappings behind pushed case-insensitive operators', () => {
  it('lists every non-ASCII character whose JavaScript case mapping reaches ASCII', () => {
    // The dialect maps exactly these; were a Node/ICU update to add one, this test fails first.
    const lowerHasAscii: string[] = []
    const upperAllAscii: string[] = []
    for (const c of nonAscii()) {
      if (/[\x00-\x7f]/.test(c.toLowerCase())) lowerHasAscii.push(`${c}→${c.toLowerCase()}`)
      if (/^[\x00-\x7f]+$/.test(c.toUpperCase())) upperAllAscii.push(`${c}→${c.toUpperCase()}`)
    }
    assert.deepEqual(lowerHasAscii, ['\u0130→i\u0307', '\u212A→k'])
    assert.deepEqual(upperAllAscii, [
      '\u00DF→SS',
      '\u0131→I',
      '\u017F→S',
      '\uFB00→FF',
      '\uFB01→FI',
      '\uFB02→FL',
      '\uFB03→FFI',
      '\uFB04→FFL',
      '\uFB05→ST',
      '\uFB06→ST',
    ])
  })

  it('pushes ASCII needles only, with the needle as a parameter', () => {
    const bound: string[] = []
    const bind = (v: string): string => {
      bound.push(v)
      return `$${bound.length}::text`
    }
    assert.equal(postgresDialect.stringMatch('contains', 't', 'Über', bind), undefined)
    assert.equal(postgresDialect.stringMatch('has', 't', 'é', bind), undefined)
    assert.equal(postgresDialect.inIgnoreCase('t', ['a', 'é'], bind), undefined)
    const eq = postgresDialect.stringMatch('=~', 't', 'AbC', bind)!
    assert.deepEqual(bound, ['abc', 'ABC'])
    assert.ok(!eq.includes('AbC') && eq.includes('$1::text') && eq.includes('$2::text'), eq)
  })
})
