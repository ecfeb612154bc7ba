import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { highlightKql, tokenizeKql } from './kql-highlight.js'

const kinds = (text: string) =>
  tokenizeKql(text)
    .filter((t) => t.text.trim() !== '')
    .map((t) => `${t.kind}:${t.text.trim()}`)

describe('KQL highlighter', () => {
  it('classifies keywords, functions, strings, numbers, timespans, pipes and comments', () => {
    assert.deepEqual(kinds('T // rows\n| where x == "a|b" and ago(1h) > t\n| summarize n = count() by bin(timestamp, 5m)'), [
      'plain:T',
      'comment:// rows',
      'pipe:|',
      'keyword:where',
      'plain:x',
      'operator:=',
      'operator:=',
      'string:"a|b"',
      'keyword:and',
      'function:ago',
      'operator:(',
      'number:1h',
      'operator:)',
      'operator:>',
      'plain:t',
      'pipe:|',
      'keyword:summarize',
      'plain:n',
      'operator:=',
      'keyword:count',
      'operator:(',
      'operator:)',
      'keyword:by',
      'function:bin',
      'operator:(',
      'plain:timestamp',
      'operator:,',
      'number:5m',
      'operator:)',
    ])
  })

  it('knows hyphenated operators, negated string operators, verbatim and obfuscated strings', () => {
    assert.deepEqual(kinds(`T | mv-expand a | where s !has 'x\\'y' and p == @"c:\\dir" and h"secret" !in ("a")`), [
      'plain:T',
      'pipe:|',
      'keyword:mv-expand',
      'plain:a',
      'pipe:|',
      'keyword:where',
      'plain:s',
      'keyword:!has',
      "string:'x\\'y'",
      'keyword:and',
      'plain:p',
      'operator:=',
      'operator:=',
      'string:@"c:\\dir"',
      'keyword:and',
      'string:h"secret"',
      'keyword:!in',
      'operator:(',
      'string:"a"',
      'operator:)',
    ])
    // A minus between identifiers that is not a known operator stays arithmetic.
    assert.deepEqual(kinds('a-b'), ['plain:a', 'operator:-', 'plain:b'])
  })

  it('escapes markup and never loses text, even for unterminated strings', () => {
    assert.equal(highlightKql('print "<b>').text, '<span class="k-kw">print</span> <span class="k-str">&quot;&lt;b&gt;</span>')
    assert.equal(
      tokenizeKql('x = "open\nnext')
        .map((t) => t.text)
        .join(''),
      'x = "open\nnext',
    )
  })

  it('the tokens always concatenate to the input (property)', () => {
    const kqlish = fc.stringMatching(/^[A-Za-z0-9_ |"'@!~=<>()\\\n\-.,`/*]{0,60}$/)
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), kqlish),
        (text) =>
          tokenizeKql(text)
            .map((t) => t.text)
            .join('') === text,
      ),
    )
  })
})
