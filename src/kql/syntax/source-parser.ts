/**
 * @module
 * The tabular sources a query or a pipe can start with, besides a table name: print, datatable,
 * range, union and search (`search` after a pipe reuses `parseSearchBody`). The operator parsers
 * (operator-parsers.ts, operator-clauses.ts) are written against this class, which parser.ts
 * extends, so they do not import the parser that imports them.
 */
import type * as A from './ast.js'
import { ExpressionParser } from './expression-parser.js'
import type { Token } from './lexer.js'
import { searchToWhere } from './search-predicate.js'

export abstract class SourceParser extends ExpressionParser {
  parseSource(t: Token): A.Expr | undefined {
    const next = this.peek(1)
    switch (t.text) {
      case 'print':
        return this.parsePrint()
      case 'datatable':
        return next.kind === 'punct' && next.text === '(' ? this.parseDatatable() : undefined
      case 'range':
        return next.kind === 'ident' || next.kind === 'quotedIdent' ? this.parseRange() : undefined
      case 'union':
        return this.parseUnionSource()
      case 'search':
        return this.parseSearchSource()
      default:
        return undefined
    }
  }

  parsePrint(): A.PrintExpr {
    const start = this.advance().start
    const items = this.parseNamedExprList()
    return { kind: 'Print', start, end: this.lastEnd, items }
  }

  parseDatatable(): A.DatatableExpr {
    const start = this.advance().start
    const columns = this.parenList(() => this.parseColumnDecl(), 'to close the datatable schema')
    let values: A.Expr[]
    const t = this.peek()
    if (t.kind === 'quotedIdent') {
      // datatable(x:string)['a'] — the lexer took ['a'] for a bracketed name
      this.advance()
      values = [{ kind: 'Literal', start: t.start + 1, end: t.end - 1, type: 'string', value: t.text }]
    } else {
      this.expectPunct('[', 'to start the datatable values')
      values = this.list(() => this.parseExpr(), { close: ']', trailing: true })
      this.expectPunct(']', 'to close the datatable values')
    }
    return { kind: 'Datatable', start, end: this.lastEnd, columns, values }
  }

  parseRange(): A.RangeExpr {
    const start = this.advance().start
    const column = this.expectName('a column name after range').name
    this.expectKeyword('from', 'in range')
    const from = this.parseExpr()
    this.expectKeyword('to', 'in range')
    const to = this.parseExpr()
    this.expectKeyword('step', 'in range')
    const step = this.parseExpr()
    return { kind: 'Range', start, end: this.lastEnd, column, from, to, step }
  }

  /**
   * `search [kind=...] [in (T1, T2*)] predicate` after a pipe or as a source. Returns the tables
   * (undefined when no `in` was written) and the predicate already rewritten as a `where` one.
   */
  parseSearchBody(): { tables: A.Expr[] | undefined; predicate: A.Expr; start: number } {
    const params = this.parseParams(['kind'])
    let caseSensitive = false
    for (const p of params) {
      if (p.value === 'case_sensitive') caseSensitive = true
      else if (p.value !== 'case_insensitive' && p.value !== 'default')
        throw this.error(p.valueStart, 'search kind must be case_sensitive, case_insensitive or default')
    }
    let tables: A.Expr[] | undefined
    if (this.isIdent('in') && this.isPunct('(', 1)) {
      this.advance()
      this.advance()
      tables = this.parseUnionTables()
      this.expectPunct(')', 'to close the list of tables to search')
    }
    const start = this.peek().start
    const t = this.peek(1)
    let raw: A.Expr
    if (this.isPunct('*') && (t.kind === 'eof' || (t.kind === 'punct' && (t.text === '|' || t.text === ';' || t.text === ')')))) {
      const star = this.advance()
      raw = { kind: 'Star', start: star.start, end: star.end }
    } else {
      this.inSearch = true
      try {
        raw = this.parseExpr()
      } finally {
        this.inSearch = false
      }
    }
    return { tables, predicate: searchToWhere(raw, caseSensitive), start }
  }

  /** `search ...` as a source: a union of the listed tables (default: every table and view in scope) with `$table`. */
  parseSearchSource(): A.Expr {
    const start = this.advance().start
    const body = this.parseSearchBody()
    const tables = body.tables ?? [{ kind: 'Name', start, end: start, name: '*', quoted: false } satisfies A.NameExpr]
    const withsource: A.OperatorParam = { name: 'withsource', value: '$table', start, end: start, valueStart: start }
    const source: A.UnionExpr = { kind: 'Union', start, end: this.lastEnd, params: [withsource], tables }
    const where: A.WhereOp = { kind: 'Where', predicate: body.predicate, searchSource: true, start: body.start, end: this.lastEnd }
    return { kind: 'Pipe', source, op: where, start, end: this.lastEnd }
  }

  parseUnionSource(): A.UnionExpr {
    const start = this.advance().start
    const params = this.parseParams(['kind', 'withsource', 'isfuzzy'])
    const tables = this.parseUnionTables()
    return { kind: 'Union', start, end: this.lastEnd, params, tables }
  }

  parseUnionTables(): A.Expr[] {
    return this.list(() => this.parseUnionTable())
  }

  /** A union operand: `(expr)`, a name (possibly with `*` wildcards) or a call. */
  parseUnionTable(): A.Expr {
    const t = this.peek()
    if ((t.kind === 'ident' || (t.kind === 'punct' && t.text === '*')) && !this.isPunct('(', 1)) {
      const pattern = this.tryWildcardName()
      if (pattern) return pattern
    }
    return this.parseExpr()
  }
}
