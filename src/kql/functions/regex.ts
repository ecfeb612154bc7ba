/**
 * @module
 * KQL's regular expressions: RE2 syntax and semantics, matched in time linear in the text (issue 15
 * item 2; design §14). Kusto's regex dialect is RE2, so a maintained RE2 implementation answers
 * exactly what Kusto would, and no pattern can backtrack exponentially (`^(a+)+$` on "aaaa…!" is
 * as fast as any other). Every regex use of the engine goes through this module: `matches regex`,
 * `extract`, `extract_all`/`extractall`, `replace_regex`/`replace`, `countof(..., "regex")`,
 * `indexof_regex`, `trim*`, `parse` (all kinds), `parse-kv with (regex=...)`, the legacy `like`
 * operators, and SQLite's `kql_match()` (which calls the evaluator's own matchers).
 *
 * The engine is `re2js` (a pure-JavaScript port of RE2 by way of Go's regexp; docs/decisions.md
 * "Query governance" says why not the native `re2` addon). Offsets are UTF-16 code units, as
 * JavaScript strings and Kusto's functions count them.
 *
 * Flags (`compileRegex(pattern, flags)`) are RE2's inline flags: `i` case-insensitive, `m`
 * multi-line (`^`/`$` at line ends), `s` (`.` matches `\n`), `U` ungreedy (swaps `x*` and `x*?`;
 * `parse kind=regex flags=U`). They apply as a leading `(?flags)` group, exactly as if the pattern
 * started with it.
 *
 * Global matching (`matchAll`) follows RE2/Go: successive non-overlapping matches, and an empty
 * match right after the previous match is skipped.
 */
import { RE2JS } from 're2js'
import { functionError } from './function-definitions.js'

/** One match: `[0]` the whole match, `[n]` group n (undefined when the group did not take part). */
export interface RegexMatch extends ReadonlyArray<string | undefined> {
  readonly 0: string
  /** UTF-16 offset of the match in the text. */
  readonly index: number
  /** Named groups (`(?P<name>...)`, `(?<name>...)`), when the pattern has any. */
  readonly groups: Readonly<Record<string, string | undefined>> | undefined
}

export interface KqlRegex {
  /** The pattern as written (without the flags). */
  readonly pattern: string
  /** RE2 flags applied to the whole pattern (a subset of `imsU`). */
  readonly flags: string
  /** Number of capturing groups. */
  readonly groupCount: number
  /** Whether the pattern matches anywhere in the text. */
  test(text: string): boolean
  /** The leftmost match, or null. */
  exec(text: string): RegexMatch | null
  /** Every successive non-overlapping match (RE2's rule for empty matches). */
  matchAll(text: string): RegexMatch[]
}

const VALID_FLAGS = /^[imsU]*$/

type IndexFinder = {
  findSubmatchIndex(text: string): number[] | null
  findAllSubmatchIndex(text: string, n: number): number[][] | null
}

function toMatch(text: string, idx: readonly number[], names: readonly [string, number][]): RegexMatch {
  const out: (string | undefined)[] = new Array(idx.length / 2)
  for (let g = 0; g < out.length; g++) {
    const a = idx[2 * g]!
    out[g] = a < 0 ? undefined : text.slice(a, idx[2 * g + 1])
  }
  let groups: Record<string, string | undefined> | undefined
  if (names.length > 0) {
    groups = {}
    for (const [name, g] of names) groups[name] = out[g]
  }
  return Object.assign(out, { index: idx[0]!, groups }) as unknown as RegexMatch
}

function build(pattern: string, flags: string, fn: string): KqlRegex {
  if (!VALID_FLAGS.test(flags)) throw functionError(fn, `unknown regex flags "${flags}" (RE2 knows i, m, s and U)`)
  const source = flags ? `(?${[...new Set(flags)].join('')})${pattern}` : pattern
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(source)
  } catch (error) {
    const detail = (error as Error).message.replace(/^error parsing regexp: /, '')
    throw functionError(fn, `invalid regular expression ${JSON.stringify(pattern)}: ${detail}`)
  }
  const finder = compiled.re2() as unknown as IndexFinder
  const names = Object.entries(compiled.namedGroups())
  return {
    pattern,
    flags,
    groupCount: compiled.groupCount(),
    test: (text) => compiled.test(text),
    exec(text) {
      const idx = finder.findSubmatchIndex(text)
      return idx ? toMatch(text, idx, names) : null
    },
    matchAll(text) {
      const all = finder.findAllSubmatchIndex(text, -1)
      return all ? all.map((idx) => toMatch(text, idx, names)) : []
    },
  }
}

const CACHE = new Map<string, KqlRegex>()
const CACHE_LIMIT = 256

/**
 * Compiles an RE2 pattern with optional flags (`imsU`). Throws KqlError('semantic') naming `fn`
 * for an invalid pattern. Compiled patterns are immutable and cached, so sharing one is safe.
 */
export function compileRegex(pattern: string, flags = '', fn = 'regex'): KqlRegex {
  const key = `${flags}\u0000${pattern}`
  let re = CACHE.get(key)
  if (re) return re
  re = build(pattern, flags, fn)
  if (CACHE.size >= CACHE_LIMIT) CACHE.delete(CACHE.keys().next().value!)
  CACHE.set(key, re)
  return re
}

/** A pattern that matches `text` literally. */
export function quoteRegex(text: string): string {
  return RE2JS.quote(text)
}
