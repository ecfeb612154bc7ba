/**
 * @module
 * The clauses of tabular operators that take more than a line to read (issue 19 item 6: split out
 * of parser.ts): sort keys, column name patterns, mv-expand items, join conditions, parse patterns,
 * render tuples, and the make-series, top-nested and scan operators.
 */
import type { KqlType } from '../types.js'
import type * as A from './ast.js'
import type { SourceParser } from './source-parser.js'

/** `expr [asc|desc] [nulls first|last], ...` (sort, top). */
export function parseOrderItems(p: SourceParser): A.OrderItem[] {
  return p.list((): A.OrderItem => {
    const expr = p.parseExpr()
    let direction: A.OrderItem['direction']
    let nulls: A.OrderItem['nulls']
    if (p.acceptIdent('asc')) direction = 'asc'
    else if (p.acceptIdent('desc')) direction = 'desc'
    if (p.acceptIdent('nulls')) {
      if (p.acceptIdent('first')) nulls = 'first'
      else if (p.acceptIdent('last')) nulls = 'last'
      else throw p.expected("'first' or 'last' after 'nulls'")
    }
    return { start: expr.start, end: p.lastEnd, expr, direction, nulls }
  })
}

/** Column names or wildcard patterns, comma separated (project-away, project-keep, project-reorder). */
export function parseNamePatterns(p: SourceParser, withOrder: boolean): A.NamePattern[] {
  return p.list((): A.NamePattern => {
    const t = p.peek()
    let pattern: string
    if (t.kind === 'quotedIdent') {
      p.advance()
      pattern = t.text
    } else {
      const w = p.tryWildcardName()
      if (w) pattern = w.name
      else pattern = p.expectName('a column name or pattern').name
    }
    let direction: A.NamePattern['direction']
    if (withOrder) {
      if (p.acceptIdent('asc')) direction = 'asc'
      else if (p.acceptIdent('desc')) direction = 'desc'
      else if (p.isIdent('granny') && p.isPunct('-', 1)) {
        p.advance()
        p.advance()
        if (p.acceptIdent('asc')) direction = 'granny-asc'
        else if (p.acceptIdent('desc')) direction = 'granny-desc'
        else throw p.expected("'asc' or 'desc' after 'granny-'")
      }
    }
    return { start: t.start, end: p.lastEnd, pattern, direction }
  })
}

/** `to typeof(type)` after an mv-expand item. */
export function parseToTypeof(p: SourceParser): KqlType | undefined {
  if (!(p.isIdent('to') && p.isIdent('typeof', 1))) return undefined
  p.advance()
  p.advance()
  p.expectPunct('(', "after 'typeof'")
  const type = p.parseTypeName()
  p.expectPunct(')', "to close 'typeof'")
  return type
}

/** mv-expand and mv-apply items: `[name =] expr [to typeof(type)], ...`. */
export function parseMvItems(p: SourceParser): A.MvExpandItem[] {
  return p.list((): A.MvExpandItem => {
    const named = p.parseNamedExpr()
    const toType = parseToTypeof(p)
    return { start: named.start, end: p.lastEnd, name: named.names[0], expr: named.expr, toType }
  })
}

export function parseJoinConditions(p: SourceParser): A.JoinCondition[] {
  const on: A.JoinCondition[] = []
  const add = (e: A.Expr): void => {
    if (e.kind === 'Binary' && e.op === 'and') {
      add(e.left)
      add(e.right)
      return
    }
    if (e.kind === 'Name') {
      on.push({ start: e.start, end: e.end, left: e.name, right: e.name, leftStart: e.start, rightStart: e.start })
      return
    }
    if (e.kind === 'Binary' && e.op === '==') {
      const l = sideOf(e.left)
      const r = sideOf(e.right)
      if (l && r && l.side !== r.side) {
        const left = l.side === '$left' ? l : r
        const right = l.side === '$left' ? r : l
        on.push({ start: e.start, end: e.end, left: left.name, right: right.name, leftStart: left.start, rightStart: right.start })
        return
      }
    }
    throw p.error(e.start, "expected a join condition: a column name or '$left.Column == $right.Column'")
  }
  p.list(() => add(p.parseExpr()))
  return on
}

/** `(a, b)` in render properties (ycolumns=(a, b)). */
export function parseParenTuple(p: SourceParser): A.Expr {
  const start = p.advance().start
  const items = p.list(() => p.parseExpr(), { close: ')', trailing: true })
  p.expectPunct(')')
  return { kind: 'Call', start, end: p.lastEnd, name: '', nameEnd: start, args: items }
}

export function parseParsePattern(p: SourceParser): A.ParsePatternPart[] {
  const parts: A.ParsePatternPart[] = []
  for (;;) {
    const t = p.peek()
    if (t.kind === 'string') {
      p.advance()
      parts.push({ kind: 'text', text: t.text, start: t.start })
    } else if (t.kind === 'punct' && t.text === '*') {
      p.advance()
      parts.push({ kind: 'star', start: t.start })
    } else if (t.kind === 'ident' || t.kind === 'quotedIdent') {
      p.advance()
      let type: KqlType | undefined
      if (p.acceptPunct(':')) type = p.parseTypeName()
      parts.push({ kind: 'column', name: t.text, type, start: t.start })
    } else {
      break
    }
  }
  if (parts.length === 0) throw p.expected('a parse pattern (string literals, column names and *)')
  return parts
}

export function parseMakeSeries(p: SourceParser, start: number): A.MakeSeriesOp {
  const params = p.parseParams(['kind'])
  const aggregates = p.list(() => {
    const item = p.parseNamedExpr()
    let defaultValue: A.Expr | undefined
    if (p.isIdent('default') && p.isPunct('=', 1)) {
      p.advance()
      p.advance()
      defaultValue = p.parseExpr()
    }
    return { item, defaultValue }
  })
  p.expectKeyword('on', 'in make-series (make-series Aggregate on Axis ...)')
  const on = p.parseExpr()
  let from: A.Expr | undefined
  let to: A.Expr | undefined
  let step: A.Expr
  let rangeSyntax = false
  if (p.acceptIdent('in')) {
    rangeSyntax = true
    const r = p.peek()
    if (!(r.kind === 'ident' && r.text === 'range' && p.isPunct('(', 1))) throw p.expected("range(start, stop, step) after 'in'")
    p.advance()
    p.advance()
    from = p.parseExpr()
    p.expectPunct(',')
    to = p.parseExpr()
    p.expectPunct(',')
    step = p.parseExpr()
    p.expectPunct(')')
  } else {
    if (p.acceptIdent('from')) from = p.parseExpr()
    if (p.acceptIdent('to')) to = p.parseExpr()
    p.expectKeyword('step', 'in make-series')
    step = p.parseExpr()
  }
  let by: A.NamedExpr[] = []
  if (p.acceptIdent('by')) by = p.parseNamedExprList()
  return {
    kind: 'MakeSeries',
    params,
    aggregates,
    on,
    from,
    to,
    step,
    ...(rangeSyntax ? { rangeSyntax } : {}),
    by,
    start,
    end: p.lastEnd,
  }
}

export function parseTopNested(p: SourceParser, start: number): A.TopNestedOp {
  const levels: A.TopNestedLevel[] = []
  for (;;) {
    const levelStart = p.peek().start
    let count: A.Expr | undefined
    if (!p.isIdent('of')) count = p.parseExpr()
    p.expectKeyword('of', 'in top-nested (top-nested N of Expr by Aggregate)')
    const of = p.parseNamedExpr()
    let others: A.TopNestedLevel['others']
    if (p.isIdent('with') && p.isIdent('others', 1)) {
      p.advance()
      p.advance()
      p.expectPunct('=')
      others = { value: p.parseExpr() }
    }
    p.expectKeyword('by', 'in top-nested')
    const by = p.parseNamedExpr()
    let direction: 'asc' | 'desc' | undefined
    if (p.acceptIdent('asc')) direction = 'asc'
    else if (p.acceptIdent('desc')) direction = 'desc'
    levels.push({ start: levelStart, end: p.lastEnd, count, of, others, by, direction })
    if (!p.acceptPunct(',')) break
    if (p.isIdent('top') && p.isPunct('-', 1) && p.isIdent('nested', 2)) {
      p.advance()
      p.advance()
      p.advance()
    }
  }
  return { kind: 'TopNested', levels, start, end: p.lastEnd }
}

export function parseScan(p: SourceParser, start: number): A.ScanOp {
  const params = p.parseParams(['with_match_id'])
  let declare: A.ScanOp['declare'][number][] = []
  if (p.acceptIdent('declare')) {
    p.expectPunct('(')
    declare = p.list(() => {
      const n = p.expectName('a state column name')
      p.expectPunct(':')
      const type = p.parseTypeName()
      let defaultValue: A.Expr | undefined
      if (p.acceptPunct('=')) defaultValue = p.parseExpr()
      return { name: n.name, type, defaultValue, start: n.start }
    })
    p.expectPunct(')')
  }
  p.expectKeyword('with', 'in scan (scan ... with (step ...))')
  p.expectPunct('(')
  const steps: A.ScanStep[] = []
  while (!p.isPunct(')')) {
    const stepStart = p.expectKeyword('step', 'in the scan body').start
    const name = p.expectName('a step name').name
    let output: A.ScanStep['output']
    if (p.isIdent('output') && p.isPunct('=', 1)) {
      p.advance()
      p.advance()
      const v = p.expectName("all, last or none after 'output='").name
      if (v !== 'all' && v !== 'last' && v !== 'none') throw p.error(p.lastEnd - v.length, "expected all, last or none after 'output='")
      output = v
    }
    p.expectPunct(':', `after step '${name}'`)
    const predicate = p.parseExpr()
    let assignments: A.ScanStep['assignments'][number][] = []
    if (p.acceptPunct('=>')) {
      assignments = p.list(() => {
        const n = p.expectName('a column to assign')
        p.expectPunct('=')
        return { name: n.name, value: p.parseExpr(), start: n.start }
      })
    }
    p.expectPunct(';', 'after the scan step')
    steps.push({ start: stepStart, end: p.lastEnd, name, output, predicate, assignments })
  }
  p.expectPunct(')', 'to close the scan body')
  if (steps.length === 0) throw p.error(start, 'scan needs at least one step')
  return { kind: 'Scan', params, declare, steps, start, end: p.lastEnd }
}

function sideOf(e: A.Expr): { side: '$left' | '$right'; name: string; start: number } | undefined {
  if (e.kind === 'Member' && e.target.kind === 'Name' && (e.target.name === '$left' || e.target.name === '$right')) {
    return { side: e.target.name, name: e.name, start: e.start }
  }
  return undefined
}
