/**
 * @module
 * Issue 15 item 2, property tests of the RE2 engine (src/kql/functions/regex.ts):
 * - on every regex the conformance cases use (shared and our own), the RE2 engine and the previous
 *   RE2 → JavaScript translation (test/kql/support/legacy-regex.ts) agree on random texts: whether
 *   it matches, where, and what each group captured;
 * - random patterns built to backtrack catastrophically (nested and overlapping quantifiers) are
 *   matched against adversarial texts in linear steps: RE2's program is linear in the pattern and
 *   its matching is O(text × program). The test's own timeout is the time budget; an exponential
 *   engine would never finish.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { RE2JS } from 're2js'
import { compileRegex } from '../../src/kql/functions/regex.js'
import { loadCases, loadOwnCases, locateSharedCases } from './conformance-harness.js'
import { legacyCompileRegex } from './support/legacy-regex.js'

/** String literals in regex positions of a query (plain "..." or '...' KQL strings; @ verbatim too). */
function regexesIn(query: string): string[] {
  const lit = String.raw`(@?)(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')`
  const positions = [
    String.raw`matches\s+regex\s+${lit}`,
    String.raw`\b(?:extract|extract_all|extractall)\s*\(\s*${lit}`,
    String.raw`\b(?:replace_regex|indexof_regex)\s*\([^,]*,\s*${lit}`,
    String.raw`\bcountof\s*\([^,]*,\s*${lit}\s*,\s*["']regex["']`,
    String.raw`\bregex\s*=\s*${lit}`,
  ]
  const out: string[] = []
  for (const p of positions) {
    for (const m of query.matchAll(new RegExp(p, 'g'))) {
      const verbatim = m[1] === '@'
      const body = m[2] ?? m[3] ?? ''
      out.push(verbatim ? body : body.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c)))
    }
  }
  return out
}

function conformanceRegexes(): string[] {
  const shared = locateSharedCases()
  const cases = [...(shared ? loadCases(shared) : []), ...loadOwnCases()]
  const found = new Set(cases.flatMap((c) => regexesIn(c.query)))
  // the patterns the function documentation and our unit tests lean on, so the set is never thin
  for (const p of ['[0-9]', 'b.*k', '(\\d+)-(\\d+)', '^\\w+@\\w+\\.com$', '(?i)abc', 'a|b|c', '([a-z]+)=([0-9]*)', '\\s+', '^$'])
    found.add(p)
  return [...found].filter((p) => {
    try {
      compileRegex(p)
      legacyCompileRegex(p)
      return true
    } catch {
      return false
    }
  })
}

test('the RE2 engine and the previous translation agree on the conformance cases’ regexes', () => {
  const patterns = conformanceRegexes()
  assert.ok(patterns.length >= 10, `found ${patterns.length} regexes`)
  for (const pattern of patterns) {
    const re2 = compileRegex(pattern)
    const legacy = legacyCompileRegex(pattern)
    // texts over the pattern's own characters plus a few common ones: where matches happen
    const alphabet = [...new Set([...pattern.replace(/[\\^$*+?()[\]{}|]/g, ''), 'a', 'b', 'k', '0', '7', ' ', '-', '=', '@', '.', 'X'])]
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }), (chars) => {
        const text = chars.join('')
        legacy.lastIndex = 0
        const want = legacy.exec(text)
        const got = re2.exec(text)
        assert.equal(got === null, want === null, `${pattern} on ${JSON.stringify(text)}`)
        if (got && want) {
          assert.equal(got.index, want.index, `${pattern} on ${JSON.stringify(text)}`)
          assert.deepEqual([...got], [...want], `${pattern} on ${JSON.stringify(text)}`)
        }
      }),
      { numRuns: 150 },
    )
  }
})

/** Patterns a backtracking engine cannot survive: nested, overlapping and alternating quantifiers. */
const atom = fc.constantFrom('a', 'a?', 'aa', '\\w', '[ab]', 'a*', '(a)')
const pattern: fc.Arbitrary<string> = fc.letrec<{ p: string }>((tie) => ({
  p: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc.tuple(tie('p'), fc.constantFrom('+', '*', '?', '+?')).map(([p, q]) => `(?:${p})${q}`),
    fc.tuple(tie('p'), tie('p')).map(([a, b]) => `(?:${a}|${b})`),
    fc.tuple(tie('p'), tie('p')).map(([a, b]) => `${a}${b}`),
  ),
})).p

test('random catastrophic patterns run in linear steps on adversarial text', { timeout: 120_000 }, () => {
  fc.assert(
    fc.property(pattern, (p) => {
      const anchored = `^(?:${p})+$`
      // RE2's program grows linearly with the pattern, and matching costs O(text x program)
      const program = RE2JS.compile(anchored).re2().numberOfInstructions() as number
      assert.ok(program <= 4 * anchored.length, `${anchored}: ${program} instructions`)
      const re = compileRegex(anchored)
      const text = `${'a'.repeat(5_000)}!`
      // a backtracking engine explores exponentially many ways to split the a's before failing at '!'
      assert.equal(re.test(text), false)
      assert.equal(re.exec(text), null)
    }),
    { numRuns: 60 },
  )
})
