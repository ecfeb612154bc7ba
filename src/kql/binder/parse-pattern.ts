/**
 * @module
 * Turns a `parse` pattern (string constants, columns, `*`) into one regular expression with a
 * capture group per column, as Kusto's parse operator does internally.
 */
import { compileRegex } from '../functions/regex.js'
import type { ParsePatternPart } from '../syntax/ast.js'
import type { KqlType } from '../types.js'

export interface ParsePatternRegex {
  readonly source: string
  readonly flags: string
  /** Capture group number of each column part, in pattern order. */
  readonly groups: readonly number[]
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}

/** The sub-pattern a typed column captures (string columns take the shortest run). */
function typePattern(type: KqlType): string {
  switch (type) {
    case 'int':
    case 'long':
      return '[-+]?\\d+'
    case 'real':
    case 'decimal':
      return '[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|[-+]?(?:[Nn]a[Nn]|[Ii]nfinity)'
    case 'bool':
      return '[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[01]'
    case 'guid':
      return '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}'
    default:
      return '[\\s\\S]*?'
  }
}

/**
 * simple/relaxed: constants match literally and the pattern is anchored at both ends (a leading
 * or trailing `*` skips text). regex: constants are regular expressions and the match is a search;
 * `*` is `.*?` and a text column `(.*)`, both under the operator's flags (U swaps greediness).
 * Relaxed lets a typed column fall back to any text (it then converts to null).
 */
export function buildParseRegex(
  parts: readonly ParsePatternPart[],
  mode: 'simple' | 'relaxed' | 'regex',
  columnTypes: readonly KqlType[],
  extraFlags: string,
): ParsePatternRegex {
  let source = mode === 'regex' ? '' : '^'
  const groups: number[] = []
  let group = 0
  let column = 0
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.kind === 'text') {
      if (mode === 'regex') {
        source += `(?:${part.text})`
        group += compileRegex(part.text, '', 'parse').groupCount
      } else {
        source += escapeRegex(part.text)
      }
    } else if (part.kind === 'star') {
      source += mode === 'regex' ? '.*?' : '[\\s\\S]*?'
    } else {
      const type = columnTypes[column++] ?? 'string'
      const last = i === parts.length - 1
      const textual = type === 'string' || type === 'dynamic' || type === 'datetime' || type === 'timespan'
      // regex mode: a text column is greedy `.*` (the documentation's example outputs; flags=U makes
      // it lazy) and `.` follows the s flag, as in the regex the user writes around it
      let inner = !textual ? typePattern(type) : mode === 'regex' ? '.*' : last ? '[\\s\\S]*' : '[\\s\\S]*?'
      if (mode === 'relaxed' && inner !== '[\\s\\S]*' && inner !== '[\\s\\S]*?') inner = `${inner}|[\\s\\S]*?`
      group++
      groups.push(group)
      source += `(${inner})`
    }
  }
  if (mode !== 'regex') source += '$'
  return { source, flags: extraFlags, groups }
}
