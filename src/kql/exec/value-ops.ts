/**
 * @module
 * Value-level operations the operators share: grouping keys, ordering, equality, string matching
 * (Kusto's `has` family), and type conversion entry points.
 */
import { dynamicJsonText } from '../dynamic-json.js'
import { compileRegex, type KqlRegex, quoteRegex } from '../functions/regex.js'
import { compareValues, hasTerm, hasTermRegex } from '../functions/value-conversions.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'

/**
 * A Map key for a value of a known type: equal values give the same key. Strings are used as is
 * (they are the common case); everything else gets a type tag so 1, "1" and true stay distinct.
 */
export function keyOf(value: KqlValue): string | number | boolean | bigint | null {
  if (value === null || value === undefined) return null
  if (typeof value === 'object') return '\u0001' + stableJson(value as DynamicValue)
  if (typeof value === 'number' && Object.is(value, -0)) return 0
  return value
}

/** A composite key for several values (summarize/distinct/join on more than one column). */
export function compositeKey(values: readonly KqlValue[]): string {
  let out = ''
  for (const v of values) {
    if (v === null || v === undefined) out += '\u0000n|'
    else if (typeof v === 'string') out += 's' + v.length + ':' + v + '|'
    else if (typeof v === 'number') out += 'd' + (Object.is(v, -0) ? 0 : v) + '|'
    else if (typeof v === 'bigint') out += 't' + v + '|'
    else if (typeof v === 'boolean') out += v ? 'T|' : 'F|'
    else out += 'j' + stableJson(v as DynamicValue) + '|'
  }
  return out
}

/** JSON with object keys in insertion order (Kusto bags keep their order). */
export function stableJson(v: DynamicValue): string {
  return dynamicJsonText(v, String)
}

/**
 * Orders two values of a type for sort/top with nulls handled by the caller. Strings compare
 * ordinally (Kusto's default), NaN sorts as the smallest real.
 */
export function compareNonNull(type: KqlType, a: KqlValue, b: KqlValue): number {
  return compareValues(type, a, b)
}

/** Deep equality of dynamic values (arrays by position, bags by key set). */
export function dynamicEquals(a: DynamicValue, b: DynamicValue): boolean {
  if (a === b) return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as DynamicValue[]
    if (a.length !== bb.length) return false
    for (let i = 0; i < a.length; i++) if (!dynamicEquals(a[i]!, bb[i]!)) return false
    return true
  }
  const ao = a as Record<string, DynamicValue>
  const bo = b as Record<string, DynamicValue>
  const ak = Object.keys(ao)
  if (ak.length !== Object.keys(bo).length) return false
  for (const k of ak) if (!(k in bo) || !dynamicEquals(ao[k]!, bo[k]!)) return false
  return true
}

function isTermChar(code: number): boolean {
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
  return /[\p{L}\p{N}]/u.test(String.fromCharCode(code))
}

/** Kusto's `has`: whole-term match, case-insensitive (the library's hasTerm: the `iu` regex of hasTermRegex). */
export function has(text: string, term: string): boolean {
  return hasTerm(text, term)
}

/** `has_cs`: whole-term match, case-sensitive. */
export function hasCs(text: string, term: string): boolean {
  if (term === '') return true
  const checkStart = isTermChar(term.charCodeAt(0))
  const checkEnd = isTermChar(term.charCodeAt(term.length - 1))
  for (let from = 0; ; ) {
    const at = text.indexOf(term, from)
    if (at < 0) return false
    const okStart = !checkStart || at === 0 || !isTermChar(text.charCodeAt(at - 1))
    const end = at + term.length
    const okEnd = !checkEnd || end >= text.length || !isTermChar(text.charCodeAt(end))
    if (okStart && okEnd) return true
    from = at + 1
  }
}

/** `hasprefix`: some term of `text` starts with `prefix`. */
export function hasPrefix(text: string, prefix: string, caseSensitive: boolean): boolean {
  if (prefix === '') return true
  const hay = caseSensitive ? text : text.toLowerCase()
  const needle = caseSensitive ? prefix : prefix.toLowerCase()
  const checkStart = isTermChar(needle.charCodeAt(0))
  for (let from = 0; ; ) {
    const at = hay.indexOf(needle, from)
    if (at < 0) return false
    if (!checkStart || at === 0 || !isTermChar(hay.charCodeAt(at - 1))) return true
    from = at + 1
  }
}

/** `hassuffix`: some term of `text` ends with `suffix`. */
export function hasSuffix(text: string, suffix: string, caseSensitive: boolean): boolean {
  if (suffix === '') return true
  const hay = caseSensitive ? text : text.toLowerCase()
  const needle = caseSensitive ? suffix : suffix.toLowerCase()
  const checkEnd = isTermChar(needle.charCodeAt(needle.length - 1))
  for (let from = 0; ; ) {
    const at = hay.indexOf(needle, from)
    if (at < 0) return false
    const end = at + needle.length
    if (!checkEnd || end >= hay.length || !isTermChar(hay.charCodeAt(end))) return true
    from = at + 1
  }
}

/**
 * SQL-style LIKE (`%` any run, `_` one character), used by the legacy `like` operators. An RE2
 * pattern, so `%a%a%a%…` cannot backtrack (issue 15).
 */
export function likePattern(pattern: string, caseSensitive: boolean): KqlRegex {
  let src = '^'
  for (const ch of pattern) {
    if (ch === '%') src += '(?s:.*)'
    else if (ch === '_') src += '(?s:.)'
    else src += quoteRegex(ch)
  }
  return compileRegex(`${src}$`, caseSensitive ? '' : 'i', 'like')
}

/** Case-insensitive equality as Kusto's `=~` (ordinal ignore case). */
export function equalsIgnoreCase(a: string, b: string): boolean {
  return a === b || (a.length === b.length && a.toLowerCase() === b.toLowerCase()) || a.toUpperCase() === b.toUpperCase()
}

/** Shared with the library's hasTerm, so `has` answers one way on every path. */
export { hasTermRegex }
