/**
 * @module
 * The `search` operator's predicate as an ordinary `where` predicate (the documentation's table
 * "Search predicate syntax"): a string literal where a bool is expected is a term over every
 * column (`* has "x"`), `Column:"x"` a term over one column, and the term's `*` wildcards pick the
 * operator — `x` has, `x*` hasprefix, `*x` hassuffix, `*x*` contains, `a*b` matches regex
 * `\ba.*b\b`. `kind=case_sensitive` uses the `_cs` operators. Everything else (comparisons,
 * `matches regex`, `and`/`or`/`not`) stays as written.
 */
import type * as A from './ast.js'

/** The marker the parser uses for `Column:"term"` while reading a search predicate. */
export const COLUMN_TERM_OP = 'search:'

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function term(target: A.Expr, text: string, caseSensitive: boolean, span: A.Span): A.Expr {
  const cs = caseSensitive ? '_cs' : ''
  const lit = (value: string): A.Expr => ({ kind: 'Literal', type: 'string', value, ...span })
  const binary = (op: string, value: string): A.Expr => ({
    kind: 'Binary',
    op,
    opStart: span.start,
    left: target,
    right: lit(value),
    ...span,
  })
  const inner = text.replace(/^\*/, '').replace(/\*$/, '')
  const leading = text.startsWith('*')
  const trailing = text.length > 1 && text.endsWith('*')
  if (text === '*') return { kind: 'Literal', type: 'bool', value: true, ...span }
  if (!inner.includes('*')) {
    if (leading && trailing) return binary(`contains${cs}`, inner)
    if (trailing) return binary(`hasprefix${cs}`, inner)
    if (leading) return binary(`hassuffix${cs}`, inner)
    return binary(`has${cs}`, inner)
  }
  // a wildcard inside the term: a regular expression between word boundaries
  const body = text
    .split('*')
    .map((part) => escapeRegex(part))
    .join('.*')
  const pattern = `${caseSensitive ? '' : '(?i)'}${leading ? '' : '\\b'}${body}${trailing ? '' : '\\b'}`
  return binary('matches regex', pattern)
}

/** Rewrites a parsed search predicate into a `where` predicate. */
export function searchToWhere(e: A.Expr, caseSensitive: boolean): A.Expr {
  const span = { start: e.start, end: e.end }
  switch (e.kind) {
    case 'Star':
      return { kind: 'Literal', type: 'bool', value: true, ...span }
    case 'Literal':
      return typeof e.value === 'string' ? term({ kind: 'Star', ...span }, e.value, caseSensitive, span) : e
    case 'Paren':
      return { ...e, expr: searchToWhere(e.expr, caseSensitive) }
    case 'Call':
      return e.name === 'not' && e.args.length === 1 ? { ...e, args: [searchToWhere(e.args[0]!, caseSensitive)] } : e
    case 'Binary': {
      if (e.op === COLUMN_TERM_OP) {
        const value = e.right.kind === 'Literal' && typeof e.right.value === 'string' ? e.right.value : ''
        return term(e.left, value, caseSensitive, span)
      }
      if (e.op === 'and' || e.op === 'or')
        return { ...e, left: searchToWhere(e.left, caseSensitive), right: searchToWhere(e.right, caseSensitive) }
      return e
    }
    default:
      return e
  }
}
