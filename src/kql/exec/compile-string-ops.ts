/**
 * @module
 * String operators compiled over already-compiled operands (split out of compile-expr.ts, issue 19
 * item 6): `contains`, `has`, `startswith`, `matches regex`, `like`, ... and their `_cs` / negated
 * forms; a constant right-hand side is prepared once (stringMatcher, regexes).
 */

import { compileRegex } from '../functions/regex.js'
import { valueToString } from '../functions/value-conversions.js'
import { KqlError } from '../kql-error.js'
import type * as P from '../plan/plan.js'
import type { KqlType, KqlValue } from '../types.js'
import type { CompiledExpr } from './rows.js'
import { equalsIgnoreCase, has, hasCs, hasPrefix, hasSuffix, hasTermRegex, likePattern } from './value-ops.js'

/** Text of a value of a type, as string operators see it (tostring semantics). */
export function textOf(t: KqlType): (v: KqlValue) => string {
  if (t === 'string') return (v) => (v ?? '') as string
  return (v) => valueToString(t, v ?? null)
}

export function compileStringOp(op: P.BinaryOp, rightExpr: P.Expr, L: CompiledExpr, R: CompiledExpr): CompiledExpr {
  const lt = textOf('string')
  const negated = op.startsWith('!')
  const base = negated ? op.slice(1) : op
  if (rightExpr.kind === 'Literal') {
    // one matcher per constant: the same function the SQLite dialect registers (kql_match), so a
    // pushed-down filter answers exactly as this evaluator does
    const f = stringMatcher(base, (rightExpr.value ?? '') as string)
    return negated ? (row, i, rows) => !f(lt(L(row, i, rows))) : (row, i, rows) => f(lt(L(row, i, rows)))
  }
  let test: (text: string, needle: string) => boolean
  switch (base) {
    case 'contains':
      test = (t, n) => t.toLowerCase().includes(n.toLowerCase())
      break
    case 'contains_cs':
      test = (t, n) => t.includes(n)
      break
    case 'has':
      test = has
      break
    case 'has_cs':
      test = hasCs
      break
    case 'hasprefix':
      test = (t, n) => hasPrefix(t, n, false)
      break
    case 'hasprefix_cs':
      test = (t, n) => hasPrefix(t, n, true)
      break
    case 'hassuffix':
      test = (t, n) => hasSuffix(t, n, false)
      break
    case 'hassuffix_cs':
      test = (t, n) => hasSuffix(t, n, true)
      break
    case 'startswith':
      test = (t, n) => t.toLowerCase().startsWith(n.toLowerCase())
      break
    case 'startswith_cs':
      test = (t, n) => t.startsWith(n)
      break
    case 'endswith':
      test = (t, n) => t.toLowerCase().endsWith(n.toLowerCase())
      break
    case 'endswith_cs':
      test = (t, n) => t.endsWith(n)
      break
    case 'like':
    case 'like_cs': {
      const cs = base === 'like_cs'
      test = (t, n) => likePattern(n, cs).test(t)
      break
    }
    case 'matches regex':
      test = (t, n) => compileRegex(n, '', 'matches regex').test(t)
      break
    default:
      throw new KqlError('semantic', `unknown operator '${op}'`)
  }
  const fixed = test
  return (row, i, rows) => {
    const r = fixed(lt(L(row, i, rows)), lt(R(row, i, rows)))
    return negated ? !r : r
  }
}

/**
 * The test of a string operator (without its `!`) against a constant right-hand side. Shared by
 * this evaluator and the SQLite functions of pushed-down filters, so both answer the same.
 */
export function stringMatcher(base: string, needle: string): (text: string) => boolean {
  switch (base) {
    case 'contains': {
      const lower = needle.toLowerCase()
      return (t) => t.toLowerCase().includes(lower)
    }
    case 'contains_cs':
      return (t) => t.includes(needle)
    case 'has':
    case 'has_cs': {
      const cs = base === 'has_cs'
      const re = hasTermRegex(needle, cs)
      if (re) return (t) => re.test(t)
      return cs ? (t) => hasCs(t, needle) : (t) => has(t, needle)
    }
    case 'hasprefix':
      return (t) => hasPrefix(t, needle, false)
    case 'hasprefix_cs':
      return (t) => hasPrefix(t, needle, true)
    case 'hassuffix':
      return (t) => hasSuffix(t, needle, false)
    case 'hassuffix_cs':
      return (t) => hasSuffix(t, needle, true)
    case 'startswith': {
      const lower = needle.toLowerCase()
      return (t) => t.toLowerCase().startsWith(lower)
    }
    case 'startswith_cs':
      return (t) => t.startsWith(needle)
    case 'endswith': {
      const lower = needle.toLowerCase()
      return (t) => t.toLowerCase().endsWith(lower)
    }
    case 'endswith_cs':
      return (t) => t.endsWith(needle)
    case 'like':
    case 'like_cs': {
      const re = likePattern(needle, base === 'like_cs')
      return (t) => re.test(t)
    }
    case 'matches regex': {
      const re = compileRegex(needle, '', 'matches regex')
      return (t) => re.test(t)
    }
    case '=~':
      return (t) => equalsIgnoreCase(t, needle)
    default:
      throw new KqlError('semantic', `unknown operator '${base}'`)
  }
}
