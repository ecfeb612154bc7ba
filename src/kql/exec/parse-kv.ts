/**
 * @module
 * parse-kv extraction: specified delimiters (greedy or not), unspecified delimiters (any
 * non-alphanumeric character separates) and regex mode; quotes and escapes as documented.
 */
import { compileRegex } from '../functions/regex.js'
import type { ParseKv } from '../plan/plan.js'

interface Quoting {
  readonly open: string
  readonly close: string
}

function quotesOf(node: ParseKv): Quoting[] {
  if (node.quote === undefined || node.quote === '') return []
  const q = node.quote
  if (q.length === 2) return [{ open: q[0]!, close: q[1]! }]
  return [...q].map((c) => ({ open: c, close: c }))
}

/** Reads a quoted run starting at `i` (the opening quote); returns its content and the end index. */
function readQuoted(text: string, i: number, q: Quoting, escapeChar: string | undefined): { value: string; end: number } {
  let out = ''
  let j = i + 1
  while (j < text.length) {
    const c = text[j]!
    if (escapeChar !== undefined && c === escapeChar && j + 1 < text.length) {
      out += text[j + 1]
      j += 2
      continue
    }
    if (c === q.close) return { value: out, end: j + 1 }
    out += c
    j++
  }
  return { value: out, end: j }
}

function unquote(value: string, quotes: readonly Quoting[], escapeChar: string | undefined): string {
  const v = value.trim()
  for (const q of quotes) {
    if (v.startsWith(q.open)) return readQuoted(v, 0, q, escapeChar).value
  }
  return v
}

/** Splits on `delimiter` outside quotes. */
function splitOutsideQuotes(text: string, delimiter: string, quotes: readonly Quoting[], escapeChar: string | undefined): string[] {
  const parts: string[] = []
  let current = ''
  let i = 0
  while (i < text.length) {
    const q = quotes.find((x) => text.startsWith(x.open, i))
    if (q) {
      const { end } = readQuoted(text, i, q, escapeChar)
      current += text.slice(i, end)
      i = end
      continue
    }
    if (delimiter !== '' && text.startsWith(delimiter, i)) {
      parts.push(current)
      current = ''
      i += delimiter.length
      continue
    }
    current += text[i]
    i++
  }
  parts.push(current)
  return parts
}

function isWordChar(c: string): boolean {
  return /[\p{L}\p{N}_]/u.test(c)
}

/** The raw text value of each requested key found in `text` (first occurrence wins). */
export function extractKeyValues(text: string, node: ParseKv): Map<string, string> {
  const wanted = new Set(node.keys.map((k) => k.name))
  const found = new Map<string, string>()
  const quotes = quotesOf(node)
  const escapeChar = node.escape
  if (node.regex !== undefined) {
    for (const m of compileRegex(node.regex, '', 'parse-kv').matchAll(text)) {
      const key = (m[1] ?? '').trim()
      if (wanted.has(key) && !found.has(key)) found.set(key, (m[2] ?? '').trim())
    }
    return found
  }
  if (node.pairDelimiter !== undefined && node.kvDelimiter !== undefined) {
    const kv = node.kvDelimiter
    const pairs = splitOutsideQuotes(text, node.pairDelimiter, quotes, escapeChar)
    let lastKey: string | undefined
    for (const pair of pairs) {
      const parts = splitOutsideQuotes(pair, kv, quotes, escapeChar)
      if (parts.length < 2) {
        if (node.greedy && lastKey !== undefined && found.has(lastKey)) {
          found.set(lastKey, found.get(lastKey)! + node.pairDelimiter + pair)
        }
        continue
      }
      const key = unquote(parts[0]!, quotes, escapeChar)
      const value = parts.slice(1).join(kv)
      lastKey = undefined
      if (wanted.has(key) && !found.has(key)) {
        found.set(key, value)
        lastKey = key
      }
    }
    for (const [k, v] of found) found.set(k, unquote(v, quotes, escapeChar))
    return found
  }
  // unspecified delimiters: words and quoted strings; a wanted key's value is the next token
  const tokens: string[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    const q = quotes.find((x) => text.startsWith(x.open, i))
    if (q) {
      const r = readQuoted(text, i, q, escapeChar)
      tokens.push(r.value)
      i = r.end
      continue
    }
    if (isWordChar(c)) {
      let j = i + 1
      while (j < text.length && isWordChar(text[j]!)) j++
      tokens.push(text.slice(i, j))
      i = j
      continue
    }
    i++
  }
  for (let t = 0; t + 1 < tokens.length; t++) {
    const key = tokens[t]!
    if (wanted.has(key) && !found.has(key)) {
      found.set(key, tokens[t + 1]!)
      t++
    }
  }
  return found
}
