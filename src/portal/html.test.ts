import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { escapeHtml, html, raw } from './html.js'

describe('portal html', () => {
  it('escapes interpolated text but keeps Html values', () => {
    const name = '<script>alert("x")</script> & \'y\''
    assert.equal(
      html`<p title="${name}">${name}</p>`.text,
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;</p>',
    )
    assert.equal(html`<div>${html`<b>${'a<b'}</b>`}</div>`.text, '<div><b>a&lt;b</b></div>')
    assert.equal(html`${raw('<hr>')}`.text, '<hr>')
  })

  it('joins lists and drops nullish and false values', () => {
    assert.equal(html`<ul>${['a', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.text, '<ul><li>a</li><li>b</li></ul>')
    assert.equal(html`${undefined}${null}${false}${0}${true}`.text, '0true')
  })

  it('escaped text never contains markup characters (property)', () => {
    fc.assert(fc.property(fc.string(), (s) => !/[<>"']/.test(escapeHtml(s)) && !/&(?!(amp|lt|gt|quot|#39);)/.test(escapeHtml(s))))
  })
})
