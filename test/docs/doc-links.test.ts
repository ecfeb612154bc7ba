/**
 * Issue 18, item 3: the documentation cites only files that are in this repository, never the
 * workspace's shared folder next to it (the spec and design are not shipped with the code), and
 * calls the CLI one way only: `./bin/provenant.js …` (docs/decisions.md, "One way to call the CLI").
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { documentationFiles, fencedBlocks, ROOT, spansAndLinks } from './markdown.js'

/** A repository path as docs write it: one of the top-level folders, then a path. */
const REPO_PATH = /(?<![\w./-])((?:src|test|docs|bench|scripts|web|bin)\/(?:\{[^}\s]*\}|[^\s`'")\]>,;])*)/g

/** `src/shared/{a,b}.ts` → both files; anything else → itself. */
function expandBraces(path: string): string[] {
  const m = /^(.*)\{([^{}]+)\}(.*)$/.exec(path)
  return m ? m[2]!.split(',').flatMap((part) => expandBraces(`${m[1]}${part}${m[3]}`)) : [path]
}

/** Cited paths of one file: trailing punctuation, anchors and :line suffixes dropped; globs and placeholders skipped. */
function citedPaths(file: string): { path: string; line: number }[] {
  const cited: { path: string; line: number }[] = []
  for (const { text, line } of spansAndLinks(file)) {
    const target = text.startsWith('../') ? text.replace(/^(\.\.\/)+/, '') : text
    for (const m of target.matchAll(REPO_PATH)) {
      const path = m[1]!
        .replace(/#.*$/, '')
        .replace(/,+$/, '')
        .replace(/:\d+(-\d+)?$/, '')
        .replace(/[.:]+$/, '')
      // A pattern or a placeholder names no one file: `src/**/*.test.ts`, `docs/<name>.md`, `src/…`.
      if (/[*<>…]/.test(path)) continue
      for (const one of expandBraces(path)) cited.push({ path: one, line })
    }
  }
  return cited
}

describe('the documentation cites only files in the repository', () => {
  it('finds the documentation (README.md and docs/**/*.md)', () => {
    const files = documentationFiles()
    assert.ok(files.includes('README.md') && files.includes('docs/decisions.md') && files.includes('docs/design/ledger.md'), files.join())
  })

  for (const file of documentationFiles()) {
    it(`${file}: every repository path in backticks or links exists`, () => {
      const missing = citedPaths(file)
        .filter(({ path }) => !existsSync(join(ROOT, path)))
        .map(({ path, line }) => `${file}:${line} ${path}`)
      assert.deepEqual(missing, [])
    })

    it(`${file}: nothing outside the repository (the shared spec and design folder) is cited as a file`, () => {
      // `../../etc/passwd` in a code span is an example of an attack, not a citation; a link is.
      const outside = spansAndLinks(file)
        .filter(({ kind, text }) => /(^|[^\w/.-])(\.\.\/)*shared\/(spec|docs)\b/.test(text) || (kind === 'link' && text.startsWith('../')))
        .map(({ text, line }) => `${file}:${line} ${text}`)
      assert.deepEqual(outside, [])
    })
  }

  it('the path check can fail: it reports a path that is not there, and expands braces', () => {
    assert.deepEqual(expandBraces('src/shared/{strict-json,canonical-json}.ts'), [
      'src/shared/strict-json.ts',
      'src/shared/canonical-json.ts',
    ])
    assert.equal(existsSync(join(ROOT, 'src/no-such-file.ts')), false)
  })
})

/** `provenant serve …`, `npx provenant …`: a command line that calls the CLI another way. */
const OTHER_SPELLING = /^(\$ )?(npx |node (--import tsx )?)?(provenant|src\/cli\/main\.ts|dist\/cli\/main\.js) [a-z-]/
/**
 * Inline code names a command (`provenant serve` processes) or shows how to call it; only the
 * latter must be spelt the one way: a span with an option, an optional part or a placeholder.
 */
const INVOCATION = /(\s-|\[|\s[A-Z]{1,}\b)/
/** Not this round's to edit (docs/design/columnar.md belongs to the columnar design's owner). */
const NOT_CHECKED = new Set(['docs/design/columnar.md'])

describe('one way to call the CLI: ./bin/provenant.js', () => {
  for (const file of documentationFiles().filter((f) => !NOT_CHECKED.has(f))) {
    it(`${file}: shell blocks and inline commands use ./bin/provenant.js`, () => {
      const other: string[] = []
      for (const block of fencedBlocks(file).filter((b) => ['sh', 'bash', 'shell', 'console'].includes(b.language))) {
        block.code.split('\n').forEach((text, i) => {
          // Commands after a pipe, `$(`, `&&` or `|` count too.
          for (const part of text.split(/\$\(|&&|\|\|?|;/)) {
            if (OTHER_SPELLING.test(part.trim())) other.push(`${file}:${block.line + 1 + i} ${text.trim()}`)
          }
        })
      }
      for (const { kind, text, line } of spansAndLinks(file))
        if (kind === 'code' && OTHER_SPELLING.test(text.trim()) && INVOCATION.test(text)) other.push(`${file}:${line} \`${text}\``)
      assert.deepEqual(other, [])
    })
  }
})
