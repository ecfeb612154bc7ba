/**
 * @module
 * Column naming as Kusto does it (default names of unnamed expressions, unique suffixes) and the
 * "did you mean" suggestions of unknown-name errors.
 */
import { FUNCTION_RESULT_NAMES } from '../functions/result-names.js'
import type * as A from '../syntax/ast.js'

/**
 * The column name Kusto derives from an expression, or undefined when it has none (then a
 * generated `Column1`/`print_0` applies): a column or variable name, `x.y` → `x_y`, `x['y']` →
 * `x_y`, and calls by their function's result-name rule (`bin(x, 1h)` → `x`, `strlen(s)` →
 * `strlen_s`; FUNCTION_RESULT_NAMES).
 */
export function resultName(e: A.Expr, isDynamic: (e: A.Expr) => boolean = () => true): string | undefined {
  switch (e.kind) {
    case 'Paren':
      return resultName(e.expr, isDynamic)
    case 'Name':
      return e.name.includes('*') ? undefined : e.name
    case 'Member': {
      if (!isDynamic(e.target)) return e.name
      const left = resultName(e.target, isDynamic)
      return left ? `${left}_${e.name}` : e.name
    }
    case 'Index': {
      const sel =
        e.index.kind === 'Literal' && (typeof e.index.value === 'string' || typeof e.index.value === 'number')
          ? String(e.index.value)
          : undefined
      if (!isDynamic(e.target)) return sel
      const left = resultName(e.target, isDynamic)
      if (sel === undefined) return undefined
      return left ? `${left}_${sel}` : sel
    }
    case 'Call': {
      if (e.name === 'column_ifexists' && e.args[0]?.kind === 'Literal' && typeof e.args[0].value === 'string') return e.args[0].value
      // Kusto.Language's result-name rule of each function (the library keeps the table)
      const rule = FUNCTION_RESULT_NAMES[e.name]
      if (!rule) return undefined
      const first = e.args[0] === undefined ? undefined : (resultName(e.args[0], isDynamic) ?? '')
      switch (rule.kind) {
        case 'firstArgument':
          return first || undefined
        case 'nameAndFirstArgument':
          return `${e.name}_${first ?? ''}`
        case 'prefixAndFirstArgument':
          return `${rule.prefix}_${first ?? ''}`
        case 'onlyArgument':
          return e.args.length === 1 ? first || undefined : undefined
        case 'prefixOnly':
          return rule.prefix
        default:
          return undefined
      }
    }
    default:
      return undefined
  }
}

/** `name`, or `name1`, `name2`, ... — the first not in `taken` (Kusto's suffix for clashes). */
export function uniqueName(name: string, taken: ReadonlySet<string> | ((n: string) => boolean)): string {
  const has = typeof taken === 'function' ? taken : (n: string) => taken.has(n)
  if (!has(name)) return name
  for (let i = 1; ; i++) {
    const candidate = `${name}${i}`
    if (!has(candidate)) return candidate
  }
}

/** Edit distance, for suggestions. */
function levenshtein(a: string, b: string): number {
  if (a === b) return 0
  const m = a.length
  const n = b.length
  if (m === 0) return n
  if (n === 0) return m
  let prev = new Array<number>(n + 1)
  let cur = new Array<number>(n + 1)
  for (let j = 0; j <= n; j++) prev[j] = j
  for (let i = 1; i <= m; i++) {
    cur[0] = i
    for (let j = 1; j <= n; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost)
    }
    ;[prev, cur] = [cur, prev]
  }
  return prev[n]!
}

/** The closest candidate to `name` (case-insensitive equality first), if it is close enough. */
export function suggest(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase()
  let best: string | undefined
  let bestScore = Infinity
  for (const c of candidates) {
    if (c === name) continue
    if (c.toLowerCase() === lower) return c
    const d = levenshtein(lower, c.toLowerCase())
    if (d < bestScore) {
      bestScore = d
      best = c
    }
  }
  const limit = Math.max(1, Math.min(3, Math.floor(name.length / 3)))
  return bestScore <= limit ? best : undefined
}

/** " (did you mean 'x'?)" or "". */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const s = suggest(name, candidates)
  return s ? ` (did you mean '${s}'?)` : ''
}

/** Whether `name` matches a project-away/keep/reorder pattern (`*` matches any run). */
export function matchesPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name
  const parts = pattern.split('*')
  let pos = 0
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (i === 0) {
      if (!name.startsWith(part)) return false
      pos = part.length
    } else if (i === parts.length - 1) {
      return name.length - part.length >= pos && name.endsWith(part)
    } else {
      const at = name.indexOf(part, pos)
      if (at < 0) return false
      pos = at + part.length
    }
  }
  return true
}
